/*
** rdt.h - public header of the rdt SQLite extension.
**
** Loadable: `.load ./dist/rdt` or sqlite3_load_extension(db, "dist/rdt", 0, &err).
** Static (built with -DSQLITE_CORE): call sqlite3_rdt_init(db, &err, NULL)
** yourself, or register it for every connection with
** sqlite3_auto_extension((void (*)(void))sqlite3_rdt_init).
*/
#ifndef RDT_H
#define RDT_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif


int sqlite3_rdt_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif

#endif
