/* prelude.h - the standard library, the .tc files of prelude/, embedded at build time
 * (cmake/embed.cmake) so the library needs no files at run time. */
#ifndef TC_PRELUDE_H
#define TC_PRELUDE_H

typedef struct tc_prelude_file {
    const char *name; /* "softmax.tc"; shown in messages as "<prelude>/softmax.tc" */
    const char *text;
} tc_prelude_file;

extern const tc_prelude_file tc_prelude_files[];
extern const int tc_prelude_count;

#endif
