/* view.c — `spanprof view`: turns folded stacks or a Chrome trace into one self-contained HTML
 * page that shows it in speedscope (MIT, https://github.com/jlfwong/speedscope), offline.
 *
 * speedscope's release files (its index.html, one JS bundle, one stylesheet, a font, licenses)
 * come from npm, pinned by viewer/package-lock.json: `make` copies them to build/speedscope and
 * `make install` to $(datadir)/spanprof/speedscope.  The page inlines the stylesheet (the font
 * as a data: URL), the bundle and the profile as base64, so it opens from anywhere with no
 * network and no file next to it.
 *
 * How the profile gets in: speedscope exposes window.speedscope.loadFileFromBase64(name, data)
 * once it has mounted, but only when its URL hash has a localProfilePath parameter (its own CLI
 * sets it to a script file to load).  The page sets that parameter itself before the bundle
 * runs, keeps any parameters the user gave (e.g. #view=sandwich), and hands the embedded profile
 * over as soon as the function exists.  (speedscope also tries to load a script named by the
 * parameter; that request fails harmlessly.)
 *
 * A run directory of `spanprof record` is viewed as its profile.folded, into its
 * flamegraph.html unless -o says otherwise.
 *
 * What gets in is speedscope's own file format (format/speedscope.c), not the input as it is:
 * it gives the flame graph a unit (ns shown as ms and µs), opens a trace on its busiest thread
 * (a flight-recorder capture on its slow call) and a differential file on what changed.  The page also picks the view it opens in, unless the
 * URL names one: left-heavy (the flame graph) for folded stacks, time order (the timeline) for a
 * trace, which it then zooms to the stretch speedscope.c chose (speedscope's file format has no
 * viewport: the page turns the mouse wheel over it, as a user would, once it is drawn).
 *
 * The page is titled after the program it shows, not the file: "PROGRAM (flame graph)", taken
 * from the JSON profile beside the file (a record directory's profile.json, X.json beside
 * X.folded) or the trace's process name; the file's name where there is neither.  speedscope
 * retitles the page after loading ("NAME - speedscope"); the page keeps its own.
 */
#define _GNU_SOURCE
#include "cmd/cmd.h"

#include <errno.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SPANPROF_SPEEDSCOPE_DIR
#define SPANPROF_SPEEDSCOPE_DIR "/usr/local/share/spanprof/speedscope"
#endif

struct buf {
    char *p;
    size_t n;
};

/* Whole file; -1 with errno set on failure. */
static int slurp(const char *path, struct buf *b)
{
    FILE *f = fopen(path, "rb");
    b->p = NULL;
    b->n = 0;
    if (!f)
        return -1;
    size_t cap = 0;
    for (;;) {
        if (b->n + 65536 + 1 > cap) {
            cap = (b->n + 65536 + 1) * 2;
            char *p = realloc(b->p, cap);
            if (!p) {
                fclose(f);
                errno = ENOMEM;
                return -1;
            }
            b->p = p;
        }
        size_t r = fread(b->p + b->n, 1, 65536, f);
        b->n += r;
        if (r < 65536)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        errno = EIO;
        return -1;
    }
    b->p[b->n] = 0;
    return 0;
}

static void base64(FILE *out, const unsigned char *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        fputc(tab[v >> 18], out), fputc(tab[v >> 12 & 63], out);
        fputc(tab[v >> 6 & 63], out), fputc(tab[v & 63], out);
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
        fputc(tab[v >> 18], out), fputc(tab[v >> 12 & 63], out);
        fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', out), fputc('=', out);
    }
}

/* Directory holding speedscope's index.html: $SPANPROF_SPEEDSCOPE_DIR, else speedscope/ next to
 * this program (the build tree), else ../share/spanprof/speedscope from it (an install moved or
 * made with `make install prefix=...`), else the configured installed copy. */
static const char *find_speedscope(char *tried, size_t size)
{
    static char dir[PATH_MAX];
    const char *cands[4] = {getenv("SPANPROF_SPEEDSCOPE_DIR"), NULL, NULL, SPANPROF_SPEEDSCOPE_DIR};
    char exe[PATH_MAX], here[PATH_MAX + 16], share[PATH_MAX + 40];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        const char *bin = dirname(exe);
        snprintf(here, sizeof here, "%s/speedscope", bin);
        snprintf(share, sizeof share, "%s/../share/spanprof/speedscope", bin);
        cands[1] = here;
        cands[2] = share;
    }
    tried[0] = 0;
    for (int i = 0; i < 4; i++) {
        if (!cands[i] || !*cands[i])
            continue;
        char index[PATH_MAX + 16];
        snprintf(index, sizeof index, "%s/index.html", cands[i]);
        if (access(index, R_OK) == 0) {
            snprintf(dir, sizeof dir, "%s", cands[i]);
            return dir;
        }
        snprintf(tried + strlen(tried), size - strlen(tried), "%s%s", *tried ? ", " : "", cands[i]);
    }
    return NULL;
}

/* The value of ATTR="..." following MARK in index.html (e.g. the bundle's hashed file name). */
static int asset_name(const char *html, const char *mark, const char *attr, char *out, size_t size)
{
    const char *p = strstr(html, mark);
    p = p ? strstr(p, attr) : NULL;
    if (!p)
        return -1;
    p += strlen(attr);
    const char *e = strchr(p, '"');
    if (!e || (size_t)(e - p) >= size || memchr(p, '/', (size_t)(e - p)))
        return -1;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return 0;
}

static int load_asset(const char *dir, const char *name, struct buf *b)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (slurp(path, b)) {
        fprintf(stderr, "spanprof: cannot read speedscope's '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Inline text must not end its own element early. */
static int inlinable(const struct buf *b, const char *end_tag)
{
    for (size_t i = 0; i + strlen(end_tag) <= b->n; i++)
        if (b->p[i] == '<' && strncasecmp(b->p + i, end_tag, strlen(end_tag)) == 0)
            return 0;
    return 1;
}

/* The stylesheet with each url("./FILE") of a file in DIR replaced by a data: URL. */
static void write_css(FILE *out, const struct buf *css, const char *dir)
{
    const char *p = css->p, *end = css->p + css->n;
    while (p < end) {
        const char *u = strstr(p, "url(\"./");
        if (!u) {
            fwrite(p, 1, (size_t)(end - p), out);
            break;
        }
        fwrite(p, 1, (size_t)(u - p), out);
        const char *name = u + 7, *q = strchr(name, '"');
        struct buf file = {0};
        char fname[256];
        if (q && (size_t)(q - name) < sizeof fname && !memchr(name, '/', (size_t)(q - name))) {
            memcpy(fname, name, (size_t)(q - name));
            fname[q - name] = 0;
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, fname);
            if (slurp(path, &file) == 0) {
                const char *ext = strrchr(fname, '.');
                const char *mime = ext && !strcmp(ext, ".woff2") ? "font/woff2"
                                   : ext && !strcmp(ext, ".png") ? "image/png"
                                                                 : "application/octet-stream";
                fprintf(out, "url(\"data:%s;base64,", mime);
                base64(out, (const unsigned char *)file.p, file.n);
                fputs("\"", out);
                free(file.p);
                p = q + 1;
                continue;
            }
        }
        fputs("url(\"./", out); /* not ours to inline: left as it was */
        p = name;
    }
}

/* What PROFILE holds, judged from its start: "trace", "folded", or NULL (with a message). */
static const char *profile_kind(const char *path, const struct buf *b)
{
    const char *p = b->p;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (!*p) {
        fprintf(stderr, "spanprof: '%s' is empty: nothing to view\n", path);
        return NULL;
    }
    if (*p == '[' || *p == '{') {
        size_t head = b->n < 4096 ? b->n : 4096;
        if (*p == '[' || memmem(b->p, head, "\"traceEvents\"", 13))
            return "trace";
        if (memmem(b->p, head, "\"spans\"", 7))
            fprintf(stderr,
                    "spanprof: '%s' is a JSON profile: it holds each span's totals, not stacks, so "
                    "there is no flame graph in it.\n  View the same run's folded stacks "
                    "(SPANPROF_FOLDED; `spanprof record` writes profile.folded beside "
                    "profile.json) or a trace (SPANPROF_TRACE); `spanprof report '%s'` prints "
                    "the profile\n",
                    path, path);
        else
            fprintf(stderr,
                    "spanprof: '%s' is JSON but not a trace: view folded stacks (SPANPROF_FOLDED) "
                    "or a trace (SPANPROF_TRACE)\n",
                    path);
        return NULL;
    }
    /* Folded stacks: the first line ends in a space and a number. */
    const char *nl = strchr(p, '\n');
    const char *e = nl ? nl : p + strlen(p);
    while (e > p && (e[-1] == '\r' || e[-1] == ' '))
        e--;
    const char *d = e;
    while (d > p && d[-1] >= '0' && d[-1] <= '9')
        d--;
    if (d == e || d == p || d[-1] != ' ') {
        fprintf(stderr, "spanprof: '%s' is neither folded stacks (\"a;b;c 123\" lines) nor a "
                        "Chrome trace\n",
                path);
        return NULL;
    }
    return "folded";
}

/* S as a JavaScript string literal to put inside a <script> element: JSON's escapes, and '<' as
 * \u003c, so no "</script>" or "<!--" in S can end or change the element. */
static char *js_string(const char *s)
{
    json_object *o = json_object_new_string(s);
    const char *json = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
    char *r = NULL;
    if (json) {
        size_t lt = 0;
        for (const char *c = json; *c; c++)
            lt += *c == '<';
        r = xmalloc(strlen(json) + 5 * lt + 1);
        char *w = r;
        for (const char *c = json; *c; c++)
            w = *c == '<' ? stpcpy(w, "\\u003c") : (*w = *c, w + 1);
        *w = 0;
    }
    json_object_put(o);
    return r;
}

static void html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else
            fputc(*s, out);
}

/* PROF in speedscope's file format, malloc'd into *OUT; falls back to PROF itself (a trace this
 * does not convert goes to speedscope's own importer).  -1 after a message for a trace no viewer
 * could show right. */
static int to_speedscope(const char *profile, const char *kind, const char *title, const char *unit,
                          const struct buf *prof, struct buf *out, struct speedscope_opening *opening)
{
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    int rc = -1;
    if (f) {
        rc = !strcmp(kind, "folded") ? speedscope_from_folded(prof->p, prof->n, title, unit, f)
                                     : speedscope_from_trace(profile, title, f, opening);
        if (fclose(f))
            rc = -1;
    }
    if (rc) {
        free(p);
        *out = *prof;
        return rc == SPEEDSCOPE_BAD_TRACE ? -1 : 0;
    }
    out->p = p;
    out->n = n;
    return 0;
}

/* The timeline zoomed to OPENING's stretch once drawn: speedscope's file format has no viewport,
 * so the page does what a user would, turning the mouse wheel (with ctrl: zoom) over the
 * timeline.  A turn zooms by at most 10 times (speedscope's clamp) about the point under the
 * mouse, a whole pixel, so the page follows the view it leaves (speedscope's arithmetic, edges
 * clamped as it clamps them) and aims each turn anew: the first turns' aim may be a pixel off,
 * which on a long run is more than the stretch is wide.  Only when the page opened in the
 * time-ordered view, and only once. */
static void zoom_script(FILE *out, const struct speedscope_opening *o)
{
    fprintf(out,
            "<script>\n"
            "(function zoom(tries) {\n"
            "  var from = %lld, to = %lld, length = %lld;\n"
            "  if (location.hash.indexOf('view=time-ordered') < 0) return;\n"
            "  // The timeline's canvas: below the minimap, where the page shows it once loaded.\n"
            "  var c = document.elementFromPoint(innerWidth / 2, innerHeight * 0.6);\n"
            "  var r = c && c.tagName === 'CANVAS' ? c.getBoundingClientRect() : null;\n"
            "  if (!r || r.top <= 0 || r.width < 2) return tries < 1000 && setTimeout(zoom, 20, tries + 1);\n"
            "  if (tries >= 0) return setTimeout(zoom, 100, -1);  // drawn once: its viewport is set\n"
            "  // A turn at a time, the view drawn in between: [lo, hi] is what it shows.\n"
            "  (function turn(lo, hi) {\n"
            "    var f = (to - from) / (hi - lo);\n"
            "    // Done: what the page did, for a test to read (the view itself is a canvas).\n"
            "    if (f >= 0.999) return document.documentElement.setAttribute('data-opened-on',\n"
            "      from + '-' + to + ' of ' + length);\n"
            "    var m = Math.max(f, 0.1), x = (from - lo * f) / (1 - f);  // x: [lo, hi] to [from, to]\n"
            "    var px = Math.round(r.left + (x - lo) / (hi - lo) * r.width);\n"
            "    x = lo + (px - r.left) / r.width * (hi - lo);  // the point under that pixel\n"
            "    c.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, ctrlKey: true,\n"
            "      deltaY: (m - 1) * 40, clientX: px, clientY: r.top + r.height / 2}));\n"
            "    var l = x - (x - lo) * m, h = x + (hi - x) * m;\n"
            "    var shift = l < 0 ? -l : h > length ? length - h : 0;\n"
            "    setTimeout(turn, 50, l + shift, h + shift);\n"
            "  })(0, length);\n"
            "})(0);\n"
            "</script>\n",
            o->from, o->to, o->length);
}

/* The program of the JSON profile at PATH (its "program", or its first process's), malloc'd;
 * NULL when PATH is no spanprof profile or names none. */
static char *program_of(const char *path)
{
    json_object *o = access(path, R_OK) == 0 ? json_object_from_file(path) : NULL, *spans, *procs;
    const char *program = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "spans", &spans)) {
        program = js_member_string(o, "program");
        if (!program && json_object_object_get_ex(o, "processes", &procs) &&
            json_object_is_type(procs, json_type_array) && json_object_array_length(procs) > 0)
            program = js_member_string(json_object_array_get_idx(procs, 0), "program");
    }
    const char *slash = program ? strrchr(program, '/') : NULL;
    char *r = program && *program ? xstrdup(slash && slash[1] ? slash + 1 : program) : NULL;
    json_object_put(o);
    return r;
}

char *program_beside(const char *profile)
{
    const char *slash = strrchr(profile, '/'), *base = slash ? slash + 1 : profile;
    int dir = (int)(base - profile);
    const char *dot = strchr(base, '.');
    char *json = xasprintf("%.*s%.*s.json", dir, profile, dot ? (int)(dot - base) : (int)strlen(base), base);
    char *program = strcmp(json, profile) ? program_of(json) : NULL;
    free(json);
    if (!program) {
        json = xasprintf("%.*sprofile.json", dir, profile);
        program = strcmp(json, profile) ? program_of(json) : NULL;
        free(json);
    }
    return program;
}

/* A JavaScript string literal of S (js_string), or "" when json-c could not make one. */
static char *js_literal(const char *s)
{
    char *r = js_string(s);
    return r ? r : xstrdup("\"\"");
}

/* The page of PROF (malloc'd, taken over), of KIND ("folded" or "trace"), read from PROFILE (a
 * trace is read again from it; NULL for stacks made in memory, whose TITLE must then be given). */
static int write_page(const char *profile, const char *kind, struct buf prof, const char *out_path,
                      const char *unit, const char *title)
{
    struct buf index, js = {0}, css = {0}, lic = {0}, font_lic = {0}, release = {0};
    char tried[4 * PATH_MAX + 64];
    const char *dir = find_speedscope(tried, sizeof tried);
    if (!dir) {
        fprintf(stderr,
                "spanprof: view needs speedscope's files, not found in %s.\n"
                "  Build them with npm: apt-get install npm nodejs; ./configure; make\n"
                "  (or `make install` them), or set SPANPROF_SPEEDSCOPE_DIR to a speedscope "
                "release directory\n",
                tried);
        return EXIT_BAD_INPUT;
    }
    char js_name[256], css_name[256];
    if (load_asset(dir, "index.html", &index))
        return EXIT_BAD_INPUT;
    if (asset_name(index.p, "<script", "src=\"", js_name, sizeof js_name) ||
        asset_name(index.p, "rel=\"stylesheet\"", "href=\"", css_name, sizeof css_name)) {
        fprintf(stderr, "spanprof: '%s/index.html' does not name speedscope's script and "
                        "stylesheet: not a speedscope release\n",
                dir);
        return EXIT_BAD_INPUT;
    }
    if (load_asset(dir, js_name, &js) || load_asset(dir, css_name, &css) ||
        load_asset(dir, "LICENSE", &lic) || load_asset(dir, "source-code-pro.LICENSE.md", &font_lic))
        return EXIT_BAD_INPUT;
    if (slurp(strcat(strcpy(tried, dir), "/release.txt"), &release) == 0)
        release.p[strcspn(release.p, "\n")] = 0;
    if (!inlinable(&js, "</script") || !inlinable(&css, "</style") ||
        !inlinable(&lic, "</script") || !inlinable(&font_lic, "</script")) {
        fprintf(stderr, "spanprof: speedscope's files in '%s' cannot be inlined in a page\n", dir);
        return EXIT_BAD_INPUT;
    }

    char def[PATH_MAX];
    if (!out_path) {
        snprintf(def, sizeof def, "%s.html", profile);
        out_path = def;
    }
    /* The page's name: the program, or the file; a trace without either is named by its own
     * process (speedscope_from_trace). */
    char *base = xstrdup(profile ? profile : "profile");
    char *program = title || !profile ? NULL : program_beside(profile);
    int trace = !strcmp(kind, "trace");
    const char *name = title ? title : program ? program : trace ? NULL : basename(base);
    struct buf page_prof;
    struct speedscope_opening opening = {NULL, 0, 0, 0};
    if (to_speedscope(profile, kind, name, unit ? unit : "nanoseconds", &prof, &page_prof, &opening))
        return EXIT_BAD_INPUT;
    if (!name)
        name = opening.name ? opening.name : basename(base);
    const char *what = trace ? "timeline"
                       : speedscope_is_differential(prof.p, prof.n) ? "change"
                       : unit && !strcmp(unit, "bytes") ? "memory" : "flame graph";
    char *page_title = title ? xstrdup(title) : xasprintf("%s (%s)", name, what);
    char *name_js = js_literal(name), *title_js = js_literal(page_title);
    struct tool_output page;
    FILE *out = output_open(&page, out_path);
    if (!out)
        return EXIT_BAD_INPUT;
    fputs("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n", out);
    fprintf(out, "<meta name=\"generator\" content=\"spanprof view %s; %s\">\n<title>",
            SPANPROF_VERSION, release.p ? release.p : "speedscope");
    html_text(out, page_title);
    fputs(" - spanprof</title>\n<style>\n", out);
    write_css(out, &css, dir);
    fprintf(out, "\n</style>\n<script>\n"
          "// speedscope retitles the page after its profile: the page keeps its own title.\n"
          "(function (title) {\n"
          "  new MutationObserver(function () {\n"
          "    if (document.title !== title) document.title = title;\n"
          "  }).observe(document.querySelector('title'), {childList: true, characterData: true, subtree: true});\n"
          "})(%s + ' - spanprof');\n", title_js);
    fprintf(out,
          "// speedscope offers loadFileFromBase64 only with a localProfilePath hash parameter.\n"
          "(function () {\n"
          "  var kept = location.hash.replace(/^#/, '').split('&').filter(function (p) {\n"
          "    return p && p.indexOf('localProfilePath=') !== 0;\n"
          "  });\n"
          "  var set = ['localProfilePath=spanprof-inline'];\n"
          "  if (!kept.some(function (p) { return p.indexOf('view=') === 0; })) set.push('view=%s');\n"
          "  history.replaceState(null, '', '#' + set.concat(kept).join('&'));\n"
          "})();\n"
          "</script>\n</head>\n<body>\n<script>\n",
          !strcmp(kind, "folded") ? "left-heavy" : "time-ordered");
    fwrite(js.p, 1, js.n, out);
    fprintf(out, "\n</script>\n<script>\n(function load() {\n"
                 "  if (!window.speedscope) return setTimeout(load, 10);\n"
                 "  window.speedscope.loadFileFromBase64(%s, \"",
            name_js);
    base64(out, (const unsigned char *)page_prof.p, page_prof.n);
    fputs("\");\n})();\n</script>\n", out);
    if (opening.to > opening.from)
        zoom_script(out, &opening);
    /* MIT and OFL notices of what the page bundles, as an inert data block. */
    fputs("<script type=\"text/plain\" id=\"third-party-licenses\">\n"
          "This page bundles speedscope (https://github.com/jlfwong/speedscope):\n\n",
          out);
    fwrite(lic.p, 1, lic.n, out);
    fputs("\n\nand the Source Code Pro font:\n\n", out);
    fwrite(font_lic.p, 1, font_lic.n, out);
    fputs("\n</script>\n</body>\n</html>\n", out);
    if (output_close(&page, 0))
        return EXIT_BAD_INPUT;
    free(name_js), free(title_js), free(page_title), free(program), free(opening.name);
    if (page_prof.p != prof.p)
        free(page_prof.p);
    free(base);
    free(prof.p), free(index.p), free(js.p), free(css.p), free(lic.p), free(font_lic.p), free(release.p);
    return 0;
}

int view_page(const char *profile, const char *out_path, const char *unit, const char *title)
{
    struct buf prof;
    if (slurp(profile, &prof)) {
        fprintf(stderr, "spanprof: cannot read '%s': %s\n", profile, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    const char *kind = profile_kind(profile, &prof);
    if (!kind)
        return EXIT_BAD_INPUT;
    return write_page(profile, kind, prof, out_path, unit, title);
}

int view_folded_page(const char *text, size_t n, const char *out_path, const char *title)
{
    struct buf prof = {xmalloc(n + 1), n};
    memcpy(prof.p, text, n);
    prof.p[n] = 0;
    return write_page(NULL, "folded", prof, out_path, NULL, title);
}

/* DIR is a directory: a run of `spanprof record` is viewed as its merged folded stacks, into
 * PAGE (the page record made of them, made again); anything else is refused.  Returns the file
 * to view (in PATH), NULL after a message. */
static const char *run_profile(const char *dir, char path[PATH_MAX], char page[PATH_MAX])
{
    int len = (int)strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    snprintf(path, PATH_MAX, "%.*s/profile.folded", len, dir);
    snprintf(page, PATH_MAX, "%.*s/flamegraph.html", len, dir);
    if (access(path, R_OK) == 0)
        return path;
    fprintf(stderr,
            "spanprof: '%s' is a directory without a profile.folded: view a run directory of "
            "`spanprof record`, folded stacks (SPANPROF_FOLDED) or a trace (SPANPROF_TRACE)\n",
            dir);
    return NULL;
}

int cmd_view(const char *profile, const char *out_path, const char *unit)
{
    char def[PATH_MAX], run[PATH_MAX];
    struct stat st;
    if (stat(profile, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!(profile = run_profile(profile, run, def)))
            return EXIT_BAD_INPUT;
        if (!out_path)
            out_path = def;
    }
    if (!out_path) {
        snprintf(def, sizeof def, "%s.html", profile);
        out_path = def;
    }
    int rc = view_page(profile, out_path, unit, NULL);
    if (rc == 0)
        printf("%s\n", out_path);
    return rc;
}
