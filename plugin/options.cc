/* options.cc — parsing and checking the -fplugin-arg-spanplugin-* options.
 *
 * The meaning of each option is documented in plugin.cc's header comment; this file only turns
 * the arguments GCC hands to plugin_init into `spanplugin_opts`, and reports malformed ones as
 * errors naming the option and the problem (the plugin then refuses to load).
 */
#include "spanplugin.h"

#include <errno.h>
#include <limits.h>

spanplugin_options spanplugin_opts;

/* Splits VALUE at commas and appends the patterns to LIST.  Empty patterns ("", "a,,b", "a,")
 * are errors: they are almost always a quoting mistake, and fnmatch ("", name) matches nothing. */
static bool
parse_glob_list (const char *base, const char *key, const char *value, vec<char *> *list)
{
  if (value == NULL)
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s%> needs a value "
             "(a comma-separated list of patterns)", base, key);
      return false;
    }
  if (*value == '\0')
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s=%>: empty pattern list", base, key);
      return false;
    }
  bool ok = true;
  const char *p = value;
  for (;;)
    {
      const char *comma = strchr (p, ',');
      size_t len = comma ? (size_t) (comma - p) : strlen (p);
      if (len == 0)
        {
          if (ok)
            error ("spanplugin: option %<-fplugin-arg-%s-%s=%s%>: empty pattern in the list",
                   base, key, value);
          ok = false;
        }
      else
        list->safe_push (xstrndup (p, len));
      if (!comma)
        break;
      p = comma + 1;
    }
  return ok;
}

/* Reads FILE (the option's value, which must be there) into LIST: one name or glob per line;
 * leading and trailing blanks are ignored, and so are blank lines and everything from a '#' to
 * the end of its line. */
static bool
read_name_file (const char *base, const char *key, const char *file, vec<char *> *list)
{
  if (file == NULL || file[0] == '\0')
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s%> needs a value (a file name)", base, key);
      return false;
    }
  FILE *f = fopen (file, "r");
  if (f == NULL)
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s=%s%>: cannot read %qs: %s",
             base, key, file, file, xstrerror (errno));
      return false;
    }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) >= 0)
    {
      char *hash = strchr (line, '#');
      if (hash)
        *hash = '\0';
      char *start = line;
      while (ISSPACE (*start))
        start++;
      char *end = start + strlen (start);
      while (end > start && ISSPACE (end[-1]))
        end--;
      if (end > start)
        list->safe_push (xstrndup (start, end - start));
    }
  bool ok = !ferror (f);
  int saved = errno;
  fclose (f);
  if (!ok)
    error ("spanplugin: option %<-fplugin-arg-%s-%s=%s%>: cannot read %qs: %s",
           base, key, file, file, xstrerror (saved));
  free (line);
  return ok;
}

/* A decimal count (of WHAT: "lines", "statements"), 0 .. INT_MAX. */
static bool
parse_count (const char *base, const char *key, const char *value, const char *what, int *out)
{
  if (value == NULL)
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s%> needs a value (a number of %s)",
             base, key, what);
      return false;
    }
  errno = 0;
  char *end;
  long v = ISDIGIT (value[0]) ? strtol (value, &end, 10) : -1;
  if (v < 0 || *end != '\0' || errno == ERANGE || v > INT_MAX)
    {
      error ("spanplugin: option %<-fplugin-arg-%s-%s=%s%>: %qs is not a non-negative integer",
             base, key, value, value);
      return false;
    }
  *out = (int) v;
  return true;
}

static bool
no_value (const char *base, const struct plugin_argument *arg)
{
  if (arg->value == NULL)
    return true;
  error ("spanplugin: option %<-fplugin-arg-%s-%s%> takes no value", base, arg->key);
  return false;
}

bool
spanplugin_parse_options (const struct plugin_name_args *info)
{
  const char *base = info->base_name;
  bool ok = true;
  const char *filter_key = NULL;   /* an option that only filters, for the warning below */
  bool include_given = false;
  spanplugin_opts.off_copy_max = SPANPLUGIN_OFF_COPY_DEFAULT;
  spanplugin_opts.min_size = SPANPLUGIN_MIN_SIZE_DEFAULT;
  spanplugin_opts.inline_path = 1;
  spanplugin_opts.patch = true;
  spanplugin_opts.split = true;
  spanplugin_opts.inline_copies = true;

  for (int i = 0; i < info->argc; i++)
    {
      const struct plugin_argument *arg = &info->argv[i];
      const char *key = arg->key;
      if (strcmp (key, "verbose") == 0)
        {
          ok &= no_value (base, arg);
          spanplugin_opts.verbose = true;
        }
      else if (strcmp (key, "all") == 0)
        {
          ok &= no_value (base, arg);
          spanplugin_opts.all = true;
        }
      else if (strcmp (key, "include") == 0)
        {
          ok &= parse_glob_list (base, key, arg->value, &spanplugin_opts.include);
          include_given = true;
        }
      else if (strcmp (key, "exclude") == 0)
        {
          ok &= parse_glob_list (base, key, arg->value, &spanplugin_opts.exclude);
          filter_key = key;
        }
      else if (strcmp (key, "exclude-file") == 0)
        {
          ok &= parse_glob_list (base, key, arg->value, &spanplugin_opts.exclude_file);
          filter_key = key;
        }
      else if (strcmp (key, "exclude-list") == 0)
        {
          ok &= read_name_file (base, key, arg->value, &spanplugin_opts.exclude);
          filter_key = key;
        }
      else if (strcmp (key, "functions") == 0)
        {
          /* Given even when unreadable: the error is the one to see, not "nothing selected". */
          spanplugin_opts.functions_given |= arg->value != NULL && arg->value[0] != '\0';
          ok &= read_name_file (base, key, arg->value, &spanplugin_opts.functions);
        }
      else if (strcmp (key, "progress") == 0)
        ok &= parse_glob_list (base, key, arg->value, &spanplugin_opts.progress);
      else if (strcmp (key, "min-lines") == 0)
        {
          ok &= parse_count (base, key, arg->value, "lines", &spanplugin_opts.min_lines);
          filter_key = key;
        }
      else if (strcmp (key, "min-size") == 0)
        ok &= parse_count (base, key, arg->value, "statements", &spanplugin_opts.min_size);
      else if (strcmp (key, "off-copy") == 0)
        ok &= parse_count (base, key, arg->value, "statements", &spanplugin_opts.off_copy_max);
      else if (strcmp (key, "inline") == 0)
        {
          const char *v = arg->value ? arg->value : "";
          if (strcmp (v, "0") == 0 || strcmp (v, "1") == 0)
            spanplugin_opts.inline_path = v[0] - '0';
          else if (strcmp (v, "all") == 0)
            spanplugin_opts.inline_path = SPANPLUGIN_INLINE_ALL;
          else
            {
              error ("spanplugin: option %<-fplugin-arg-%s-%s%> needs the value 0, 1 or all",
                     base, key);
              ok = false;
            }
        }
      else if (strcmp (key, "patch") == 0 || strcmp (key, "split") == 0
               || strcmp (key, "inline-copies") == 0)
        {
          const char *v = arg->value ? arg->value : "";
          if (strcmp (v, "0") == 0 || strcmp (v, "1") == 0)
            *(strcmp (key, "patch") == 0   ? &spanplugin_opts.patch
              : strcmp (key, "split") == 0 ? &spanplugin_opts.split
                                           : &spanplugin_opts.inline_copies)
              = v[0] == '1';
          else
            {
              error ("spanplugin: option %<-fplugin-arg-%s-%s%> needs the value 0 or 1",
                     base, key);
              ok = false;
            }
        }
      else
        {
          error ("spanplugin: unknown option %<-fplugin-arg-%s-%s%>", base, key);
          ok = false;
        }
    }

  /* Filters with nothing to filter are a likely mistake, but harmless: warn, do not refuse. */
  if (ok && include_given && !spanplugin_opts.all)
    warning (0, "spanplugin: option %<-fplugin-arg-%s-include%> has no effect without "
             "%<-fplugin-arg-%s-all%>", base, base);
  if (ok && filter_key && !spanplugin_opts.all && !spanplugin_opts.functions_given)
    warning (0, "spanplugin: option %<-fplugin-arg-%s-%s%> has no effect without "
             "%<-fplugin-arg-%s-all%> or %<-fplugin-arg-%s-functions%>",
             base, filter_key, base, base);
  return ok;
}
