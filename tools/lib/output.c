/* output.c — the files the tool writes (merge -o, convert -o, view's page): each one through a
 * temporary file in its directory, renamed into place only when complete, so a failed write (a
 * full disk, a quota, an I/O error) leaves every existing file as it was — including an input
 * the output replaces, as in `merge -o all.folded all.folded b.folded`.  What may be written at
 * a path is the runtime's rule (runtime/common/outfile.c): a symbolic link of another user and
 * a file that is not regular are refused.  A link of the user's own is resolved first, so that
 * its target, too, is replaced whole rather than rewritten in place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/lib.h"

/* PATH, or the file a link of the user's own (or root's) at PATH names, into OUT. */
static void resolve(const char *path, char *out, size_t size)
{
    struct stat st;
    snprintf(out, size, "%s", path);
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode) ||
        (st.st_uid != geteuid() && st.st_uid != 0))
        return; /* not a link, or one outfile.c refuses */
    char resolved[PATH_MAX];
    if (realpath(path, resolved)) {
        snprintf(out, size, "%s", resolved);
        return;
    }
    /* A dangling link: its target, relative to the link's folder. */
    char target[PATH_MAX], dir[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return;
    target[n] = 0;
    snprintf(dir, sizeof dir, "%s", path);
    const char *base = target[0] == '/' ? "" : dirname(dir);
    int len = snprintf(out, size, "%s%s%s", base, *base ? "/" : "", target);
    if (len < 0 || (size_t)len >= size)
        snprintf(out, size, "%s", path); /* too long: left to outfile.c as it is */
}

FILE *output_open(struct tool_output *o, const char *path)
{
    o->shown = path;
    resolve(path, o->path, sizeof o->path);
    int err = spanprof__outfile_open(o->path, "", &o->file);
    if (!err && !(o->f = spanprof__outfile_stream(&o->file)))
        err = spanprof__outfile_finish(&o->file, o->path, errno ? errno : ENOMEM);
    if (err) {
        fprintf(stderr, "spanprof: cannot write '%s': %s\n", path, spanprof__outfile_reason(err));
        return NULL;
    }
    return o->f;
}

int output_close(struct tool_output *o, int failed)
{
    int err = failed ? (errno ? errno : EIO) : 0; /* the writer's error, as it left errno */
    errno = 0;
    if ((fflush(o->f) != 0 || ferror(o->f)) && !err)
        err = errno ? errno : EIO;
    fclose(o->f); /* the descriptor stays open: spanprof__outfile_finish closes it */
    o->f = NULL;
    err = spanprof__outfile_finish(&o->file, o->path, err);
    if (err)
        fprintf(stderr, "spanprof: cannot write '%s': %s\n", o->shown,
                spanprof__outfile_reason(err));
    return err ? -1 : 0;
}
