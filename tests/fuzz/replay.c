/*
** replay.c - runs a libFuzzer target over files, without libFuzzer, so the
** targets can be built with any compiler (gcc, with or without ASan) and
** their corpus replayed in the normal test suite.
**
**   build/fuzz-replay-model DIR|FILE ...
**
** Each file is read into a buffer of exactly its size and passed to
** LLVMFuzzerTestOneInput in a child process (fork per file), so a crash, a
** sanitizer report or a failed property names its file and the other files
** still run; a file taking more than RDT_FUZZ_REPLAY_TIMEOUT seconds
** (default 300: a hang guard for a busy machine, not a speed test) fails
** too, reported as "timed out after N s". The child leaves with exit(), so LeakSanitizer
** checks every file. One line per argument:
**   ok - fuzz replay <target>: N files
**   not ok - fuzz replay <target>: K of N files failed (each named on a # line)
** then "N passed, N failed" (arguments, not files). Exit status 1 if
** anything failed. <target> is the program name less "fuzz-replay-".
*/
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file list of the current argument. Global so that it stays reachable
** in the forked children (leak checkers then do not count it as lost). */
static char **files;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one file in a child. Returns 1 if it passed. */
static int run_file(const char *path, unsigned timeout) {
  struct stat st;
  if (stat(path, &st) != 0) {
    printf("#   %s: %s\n", path, strerror(errno));
    return 0;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    printf("#   %s: fork failed: %s\n", path, strerror(errno));
    return 0;
  }
  if (pid == 0) {
    FILE *fp = fopen(path, "rb");
    size_t size = (size_t)st.st_size;
    unsigned char *buf = malloc(size ? size : 1);
    if (!fp || !buf || fread(buf, 1, size, fp) != size) {
      fprintf(stderr, "%s: cannot read\n", path);
      _exit(3);
    }
    fclose(fp);
    alarm(timeout);
    LLVMFuzzerTestOneInput(buf, size); /* exactly size bytes: no slack to read past */
    free(buf);
    exit(0);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      printf("#   %s: waitpid failed: %s\n", path, strerror(errno));
      return 0;
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
  if (WIFSIGNALED(status))
  {
    if (WTERMSIG(status) == SIGALRM) printf("#   %s: timed out after %u s (RDT_FUZZ_REPLAY_TIMEOUT)\n", path, timeout);
    else printf("#   %s: killed by signal %d\n", path, WTERMSIG(status));
  }
  else
    printf("#   %s: exit status %d\n", path, WEXITSTATUS(status));
  return 0;
}

int main(int argc, char **argv) {
  const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  const char *target = strncmp(prog, "fuzz-replay-", 12) == 0 ? prog + 12 : prog;
  const char *t = getenv("RDT_FUZZ_REPLAY_TIMEOUT");
  unsigned timeout = t && atoi(t) > 0 ? (unsigned)atoi(t) : 300;
  int passed = 0, failed = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR|FILE ...\n", argv[0]);
    return 2;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  for (int a = 1; a < argc; a++) {
    size_t n = 0, cap = 0, bad = 0;
    files = NULL;
    struct stat st;
    if (stat(argv[a], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[a]);
      struct dirent *e;
      while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue; /* ., .., hidden files */
        if (n == cap) {
          cap = cap ? 2 * cap : 64;
          files = realloc(files, cap * sizeof *files);
          if (!files) abort();
        }
        size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
        files[n] = malloc(len);
        if (!files[n]) abort();
        snprintf(files[n++], len, "%s/%s", argv[a], e->d_name);
      }
      if (d) closedir(d);
      qsort(files, n, sizeof *files, cmp_str);
    } else if (stat(argv[a], &st) == 0) {
      files = malloc(sizeof *files);
      if (!files || !(files[0] = strdup(argv[a]))) abort();
      n = 1;
    }
    for (size_t i = 0; i < n; i++) {
      if (!run_file(files[i], timeout)) bad++;
      free(files[i]);
    }
    free(files);
    files = NULL;
    if (n == 0) {
      printf("not ok - fuzz replay %s: no files in %s\n", target, argv[a]);
      failed++;
    } else if (bad) {
      printf("not ok - fuzz replay %s: %zu of %zu files in %s failed\n", target, bad, n, argv[a]);
      failed++;
    } else {
      printf("ok - fuzz replay %s: %zu files\n", target, n);
      passed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
