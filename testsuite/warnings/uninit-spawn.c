/* -Wmaybe-uninitialized's predicate analysis on a variable set on some paths and used under a
 * correlated predicate, cut down from libuv's uv_spawn (src/unix/process.c): `pid` is set by the
 * fork helper whenever the child helper returns 0, and used only then.  GCC proves it set; with
 * the inline path's branches in the way, GCC 12 once reported "'pid' may be used
 * uninitialized" there (spawn, the line `p->pid = pid;`) at -O2 and -O3 with the plugin only,
 * and GCC 11 did with the exit's test of the state alone (which inline=0 still has).  Not at
 * -Os with GCC 11: there the plain build avoids the warning by threading the path where the
 * helper failed past the use, which copies the block of the helper's return, and with a span
 * that block holds the exit's call, too big a copy at -Os (GCC 12 warns in neither build).
 * The unused parameter at the end is the warning both builds give. */
/* warnings-skip: 11 Os */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct options
{
  const char *file;
  int stdio_count;
  int *stdio;
};

struct process
{
  int pid;
};

extern int make_pipe (int fds[2], int flags);
extern int open_stream (int *container, int pipe[2]);
extern void child_init (const struct options *options, int error_fd);

static int
fork_child (const struct options *options, int error_fd, pid_t *pid)
{
  *pid = fork ();
  if (*pid == 0)
    child_init (options, error_fd);
  return 0;
}

static int
spawn_child (const struct options *options, pid_t *pid)
{
  int signal_pipe[2] = { -1, -1 };
  int status;
  int err;
  int exec_errorno;
  ssize_t r;

  err = make_pipe (signal_pipe, 0);
  if (err)
    return err;
  err = fork_child (options, signal_pipe[1], pid);
  if (err == 0)
    {
      do
        r = read (signal_pipe[0], &exec_errorno, sizeof exec_errorno);
      while (r == -1 && errno == EINTR);
      if (r == 0)
        ;
      else if (r == sizeof exec_errorno)
        {
          do
            err = waitpid (*pid, &status, 0);
          while (err == -1 && errno == EINTR);
          assert (err == *pid);
        }
      else if (r == -1 && errno == EPIPE)
        err = -EPIPE;
    }
  return err;
}

int
spawn (struct process *p, const struct options *options)
{
  int pipes_storage[8][2];
  int (*pipes)[2];
  pid_t pid;
  int err;
  int exec_errorno;
  int i;

  assert (options->file != NULL);
  pipes = pipes_storage;
  for (i = 0; i < options->stdio_count; i++)
    {
      pipes[i][0] = -1;
      pipes[i][1] = -1;
    }
  exec_errorno = spawn_child (options, &pid);
  if (exec_errorno == 0)
    p->pid = pid;
  for (i = 0; i < options->stdio_count; i++)
    {
      err = open_stream (options->stdio + i, pipes[i]);
      if (err)
        return err;
    }
  return exec_errorno;
}

int
spawn_count (const struct options *options, int flags)
{
  return options->stdio_count;
}
