"""One gnuplot helper for the accuracy scripts: lines with ±sd error bars."""
import shutil
import subprocess
from pathlib import Path


def errorbar_plot(png, title, xlabel, ylabel, xs, series, settings=()):
    """Draw series [(title, [(mean, sd) or None per x])] against xs into png (a Path).
    settings: more gnuplot `set` lines (ranges, key, log scale). False when gnuplot is missing."""
    if not shutil.which("gnuplot"):
        return False
    png = Path(png)
    dat = png.with_suffix(".dat")
    dat.write_text("".join(" ".join([str(x)] + [f"{p[0]} {p[1]}" if p else "NaN NaN" for _, ps in series
                                                  for p in [ps[i]]]) + "\n" for i, x in enumerate(xs)))
    plots = ", ".join(f"'{dat}' using 1:{2 + 2 * j}:{3 + 2 * j} with yerrorlines title '{t}'"
                      for j, (t, _) in enumerate(series))
    script = "\n".join(["set terminal pngcairo size 760,560", f"set output '{png}'", f"set title '{title}'",
                        f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}'", "set grid", *settings,
                        f"plot {plots}"])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    dat.unlink()
    return True
