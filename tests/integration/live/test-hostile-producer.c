/* test-hostile-producer.c — `wick-trace attach` and `sessions` (real second
 * processes) beside hostile-producer (a real third one, a fake session that
 * hands out hostile rings and snapshots). Each case must
 * end within its deadline, by exit and never by a signal, in a bounded
 * amount of memory (the child's peak RSS, from wait4), with the sentence
 * that says what was refused or cut. What each guards against:
 * SIGBUS (truncate), a heap overflow (meta-overflow), a spin that ignored
 * --duration and SIGTERM (commit-wrap), 128 GiB of synthesized lines
 * (names), a read blocked forever (snapshot-eventfd, snapshot-fifo), a stack
 * overflow in json-glib (snapshot-deep), gigabytes of RSS (snapshot-lines),
 * 31 s of `sessions` (silent), a follow blocked in open() for ever (a FIFO,
 * a FIFO renamed over the file), 76 MB of RSS for a 64 MiB partial line
 * under a 1 MiB line limit, WICK_MAX_LINE_BYTES=abc taken silently. A hang
 * is told from a slow machine by generous deadlines: the failures ran for
 * ever (or 31 s), the fixed runs take about a second of CPU. */
#include "config.h"

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-test-wait.h"

typedef struct
{
  gboolean timed_out;
  int status;       /* wait status */
  long max_rss_kb;  /* the child's peak resident set */
  double seconds;   /* how long it ran */
  char *err;        /* its stderr */
} Run;

static void
run_clear (Run *run)
{
  g_free (run->err);
}

static char *runtime_dir;

static char **
child_env (void)
{
  char **env = g_get_environ ();
  return g_environ_setenv (env, "XDG_RUNTIME_DIR", runtime_dir, TRUE);
}

typedef struct
{
  const char *env_name; /* set for the child, or NULL */
  const char *env_value;
  double term_s;                  /* SIGTERM after this, when > 0 */
  void (*during) (gpointer data); /* called once after during_s, when set */
  double during_s;
  gpointer during_data;
} RunOptions;

/* Runs argv to its end or deadline_s (then SIGKILL). */
static void
run_tool_full (const char *const *argv, double deadline_s, const RunOptions *options, Run *run)
{
  memset (run, 0, sizeof *run);
  g_autofree char *err_path = g_build_filename (runtime_dir, "stderr.txt", NULL);
  g_auto (GStrv) env = child_env ();
  if (options->env_name != NULL)
    env = g_environ_setenv (env, options->env_name, options->env_value, TRUE);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      wick_test_die_with_parent (NULL);
      int fd = open (err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int null = open ("/dev/null", O_RDWR);
      dup2 (fd, 2);
      dup2 (null, 1);
      dup2 (null, 0);
      execve (argv[0], (char **)argv, env);
      _exit (127);
    }
  gint64 start = g_get_monotonic_time ();
  gboolean termed = FALSE, called = FALSE;
  double term_s = options->term_s;
  for (;;)
    {
      struct rusage usage;
      pid_t done = wait4 (pid, &run->status, WNOHANG, &usage);
      if (done == pid)
        {
          run->max_rss_kb = usage.ru_maxrss;
          break;
        }
      double elapsed = (g_get_monotonic_time () - start) / 1e6;
      if (options->during != NULL && !called && elapsed >= options->during_s)
        {
          options->during (options->during_data);
          called = TRUE;
        }
      if (term_s > 0 && !termed && elapsed >= term_s)
        {
          kill (pid, SIGTERM);
          termed = TRUE;
        }
      if (elapsed > deadline_s)
        {
          run->timed_out = TRUE;
          kill (pid, SIGKILL);
          wait4 (pid, &run->status, 0, &usage);
          break;
        }
      g_usleep (10000);
    }
  run->seconds = (g_get_monotonic_time () - start) / 1e6;
  g_file_get_contents (err_path, &run->err, NULL, NULL);
  if (run->err == NULL)
    run->err = g_strdup ("");
  g_test_message ("%s %s: %.2f s, peak RSS %ld KiB, %s %d; stderr: %.600s", argv[1],
                  argv[g_strv_length ((char **)argv) - 1], run->seconds, run->max_rss_kb,
                  WIFSIGNALED (run->status) ? "signal" : "exit",
                  WIFSIGNALED (run->status) ? WTERMSIG (run->status) : WEXITSTATUS (run->status),
                  run->err);
}

static void
run_tool (const char *const *argv, double deadline_s, double term_s, Run *run)
{
  RunOptions options = { .term_s = term_s };
  run_tool_full (argv, deadline_s, &options, run);
}

static void
assert_exited (const Run *run, double max_seconds)
{
  if (run->timed_out)
    g_error ("still running after %.1f s (killed); stderr: %s", run->seconds, run->err);
  if (WIFSIGNALED (run->status))
    g_error ("killed by signal %d (%s); stderr: %s", WTERMSIG (run->status),
             g_strsignal (WTERMSIG (run->status)), run->err);
  g_assert_cmpfloat (run->seconds, <=, max_seconds);
}

typedef struct
{
  GPid pid;
  int out;
} Producer;

static gboolean
start_producer (const char *mode, Producer *producer)
{
  const char *path = g_getenv ("WICK_HOSTILE_PRODUCER");
  if (path == NULL)
    return FALSE;
  const char *argv[] = { path, mode, NULL };
  g_auto (GStrv) env = child_env ();
  GError *error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                           wick_test_die_with_parent, NULL, &producer->pid, NULL,
                                           &producer->out, NULL, &error));
  g_assert_no_error (error);
  /* "ready" once its socket listens (the names ring takes a moment) */
  char line[16] = "";
  gsize got = 0;
  WickTestDeadline deadline = wick_test_deadline (60);
  while (got < 6)
    {
      struct pollfd pfd = { producer->out, POLLIN, 0 };
      if (poll (&pfd, 1, 100) > 0)
        {
          ssize_t n = read (producer->out, line + got, 6 - got);
          g_assert_cmpint (n, >, 0);
          got += (gsize)n;
        }
      if (wick_test_deadline_elapsed (&deadline) > 60)
        g_error ("hostile-producer %s did not say ready in 60 s", mode);
    }
  g_assert_true (g_str_has_prefix (line, "ready"));
  return TRUE;
}

static void
stop_producer (Producer *producer)
{
  kill (producer->pid, SIGKILL);
  waitpid (producer->pid, NULL, 0);
  g_spawn_close_pid (producer->pid);
  close (producer->out);
  /* its socket files stay: the next producer has another pid */
}

/* attach to a hostile producer of @mode; the run in @run. */
static gboolean
attach_to (const char *mode, const char *duration, double deadline_s, double term_s, Run *run,
           char **output)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  Producer producer;
  if (wick_trace == NULL || !start_producer (mode, &producer))
    {
      g_test_skip ("WICK_TRACE or WICK_HOSTILE_PRODUCER is not set");
      return FALSE;
    }
  *output = g_build_filename (runtime_dir, "attach.jsonl", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int)producer.pid);
  const char *with_duration[]
    = { wick_trace, "attach", "--duration", duration, "--output", *output, pid, NULL };
  const char *without[] = { wick_trace, "attach", "--output", *output, pid, NULL };
  run_tool (duration != NULL ? with_duration : without, deadline_s, term_s, run);
  stop_producer (&producer);
  return TRUE;
}

static void
assert_has (const Run *run, const char *text)
{
  if (strstr (run->err, text) == NULL)
    g_error ("stderr lacks “%s”: %s", text, run->err);
}

/* The last line of the file is a terminal; it contains @text (or NULL). */
static void
assert_terminal_says (const char *path, const char *said)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_assert_cmpuint (length, >, 0);
  g_assert_true (text[length - 1] == '\n');
  text[length - 1] = '\0';
  const char *last = strrchr (text, '\n');
  last = last != NULL ? last + 1 : text;
  g_assert_true (g_str_has_prefix (last, "{\"kind\":\"terminal\""));
  if (said != NULL && strstr (last, said) == NULL)
    g_error ("the terminal does not say “%s”: %s", said, last);
}

static void
assert_terminal (const char *path)
{
  assert_terminal_says (path, NULL);
}

static void
test_truncate (void)
{
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to ("truncate", "2", 20, 0, &run, &output))
    return;
  assert_exited (&run, 20);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
  assert_has (&run, "not sealed against shrinking");
  run_clear (&run);
}

static void
test_meta_overflow (void)
{
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to ("meta-overflow", "2", 20, 0, &run, &output))
    return;
  assert_exited (&run, 20);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
  assert_has (&run, "sizes or offsets do not fit");
  g_assert_cmpint (run.max_rss_kb, <, 256 * 1024);
  run_clear (&run);
}

static void
test_commit_wrap_duration (void)
{
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to ("commit-wrap", "1", 60, 0, &run, &output))
    return;
  assert_exited (&run, 30);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  assert_has (&run, "past 2^62");
  assert_terminal (output);
  run_clear (&run);
}

static void
test_commit_wrap_sigterm (void)
{
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to ("commit-wrap", NULL, 60, 1.0, &run, &output))
    return;
  assert_exited (&run, 30);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  assert_terminal_says (output, "interrupted");
  run_clear (&run);
}

static void
test_names (void)
{
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to ("names", "2", 120, 0, &run, &output))
    return;
  assert_exited (&run, 90);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  assert_has (&run, "long names cut");
  struct stat st;
  g_assert_cmpint (g_stat (output, &st), ==, 0);
  g_test_message ("names: %lld bytes written", (long long)st.st_size);
  /* 128 Ki synthesized spans: 4 MiB of names, then 64-byte ones */
  g_assert_cmpint (st.st_size, <, 96 << 20);
  g_assert_cmpint (run.max_rss_kb, <, 512 * 1024);
  assert_terminal (output);
  run_clear (&run);
}

static void
test_snapshot (gconstpointer data)
{
  const char *mode = data;
  Run run;
  g_autofree char *output = NULL;
  if (!attach_to (mode, "1", 120, 0, &run, &output))
    return;
  assert_exited (&run, 90);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  assert_has (&run, "no attach snapshot");
  if (strcmp (mode, "snapshot-deep") == 0)
    assert_has (&run, "nested");
  else if (strcmp (mode, "snapshot-lines") == 0)
    assert_has (&run, "lines");
  else
    assert_has (&run, "not a regular file");
  g_assert_cmpint (run.max_rss_kb, <, 768 * 1024);
  assert_terminal (output);
  run_clear (&run);
}

static void
test_sessions_silent (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  Producer producer;
  if (wick_trace == NULL || !start_producer ("silent", &producer))
    {
      g_test_skip ("WICK_TRACE or WICK_HOSTILE_PRODUCER is not set");
      return;
    }
  const char *argv[] = { wick_trace, "sessions", "--json", NULL };
  Run run;
  run_tool (argv, 60, 0, &run);
  stop_producer (&producer);
  /* in series the 31 hellos take 31 s, whatever the load; at once about 1 */
  assert_exited (&run, 15);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  run_clear (&run);
}

/* 600 sockets of one live process that never answer (hundreds of hostile
 * session files): 23fd216 probed 64 at a time, each up to its 1 s hello
 * deadline, so the listing took about 10 s; now every probe shares one
 * listing deadline of 2 s. */
static void
test_sessions_silent_many (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  Producer producer;
  if (wick_trace == NULL || !start_producer ("silent-many", &producer))
    {
      g_test_skip ("WICK_TRACE or WICK_HOSTILE_PRODUCER is not set");
      return;
    }
  const char *argv[] = { wick_trace, "sessions", "--json", NULL };
  Run run;
  gint64 start = g_get_monotonic_time ();
  run_tool (argv, 60, 0, &run);
  double seconds = (double)(g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  stop_producer (&producer);
  g_test_message ("sessions beside 600 silent sockets: %.2f s", seconds);
  assert_exited (&run, 15);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  g_assert_cmpfloat (seconds, <, 5);
  run_clear (&run);
}

/* ---- follow ---- */

static void
test_follow_fifo (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_test_skip ("WICK_TRACE is not set");
      return;
    }
  g_autofree char *fifo = g_build_filename (runtime_dir, "follow.fifo", NULL);
  g_autofree char *output = g_build_filename (runtime_dir, "follow.jsonl", NULL);
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  const char *argv[]
    = { wick_trace, "attach", "--follow", fifo, "--duration", "2", "--output", output, NULL };
  Run run;
  run_tool (argv, 60, 0, &run);
  assert_exited (&run, 30);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
  assert_has (&run, "a FIFO, not a regular file");
  g_unlink (fifo);
  run_clear (&run);
}

static void
rename_fifo_over (gpointer data)
{
  const char *path = data;
  g_autofree char *fifo = g_strconcat (path, ".fifo", NULL);
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_assert_cmpint (g_rename (fifo, path), ==, 0);
}

static const char meta_line[]
  = "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"run-1\",\"correla"
    "tion_id\":\"corr-1\",\"entrypoint\":\"demo\",\"phase\":\"infer\",\"timestamp\":\"2026-"
    "08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\",\"measured_"
    "region_device_synchronized\":false,\"timing_mode\":\"host\",\"capture_contract\":{\"me"
    "asurement_scope\":\"profiled_work\",\"operations\":\"complete\",\"tensors\":\"partial\""
    ",\"gradients\":\"none\",\"logical_memory\":\"partial\",\"physical_memory\":\"partial\""
    ",\"device_timing\":\"partial\",\"required_semantic_labels\":[\"forward\"]},\"tags\":{\""
    "lesson\":\"1\"}}\n";

static void
test_follow_fifo_renamed_over (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_test_skip ("WICK_TRACE is not set");
      return;
    }
  g_autofree char *path = g_build_filename (runtime_dir, "followed.jsonl", NULL);
  g_autofree char *output = g_build_filename (runtime_dir, "follow.jsonl", NULL);
  g_unlink (path);
  g_assert_true (g_file_set_contents (path, meta_line, -1, NULL));
  const char *argv[]
    = { wick_trace, "attach", "--follow", path, "--duration", "5", "--output", output, NULL };
  RunOptions options = { .during = rename_fifo_over, .during_s = 0.5, .during_data = path };
  Run run;
  run_tool_full (argv, 60, &options, &run);
  assert_exited (&run, 30);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
  assert_has (&run, "a FIFO, not a regular file");
  /* what was read before stays, with a cut terminal */
  assert_terminal_says (output, "capture cut");
  g_unlink (path);
  run_clear (&run);
}

static void
test_follow_long_line (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_test_skip ("WICK_TRACE is not set");
      return;
    }
  /* a 64 MiB line without newline, under a 1 MiB line limit: the follower
   * holds at most the limit (the 1.5 GiB line, scaled down) */
  g_autofree char *path = g_build_filename (runtime_dir, "long.jsonl", NULL);
  g_autofree char *output = g_build_filename (runtime_dir, "follow.jsonl", NULL);
  FILE *file = fopen (path, "w");
  g_assert_nonnull (file);
  fputs (meta_line, file);
  g_autofree char *chunk = g_malloc (1 << 20);
  memset (chunk, 'x', 1 << 20);
  fputs ("{\"kind\":\"span_start\",\"name\":\"", file);
  for (int i = 0; i < 64; i++)
    fwrite (chunk, 1, 1 << 20, file);
  g_assert_cmpint (fclose (file), ==, 0);
  const char *argv[]
    = { wick_trace, "attach", "--follow", path, "--duration", "1", "--output", output, NULL };
  RunOptions options = { .env_name = "WICK_MAX_LINE_BYTES", .env_value = "1M" };
  Run run;
  run_tool_full (argv, 60, &options, &run);
  assert_exited (&run, 40);
  g_assert_cmpint (WEXITSTATUS (run.status), ==, 0);
  assert_has (&run, "1 line(s) longer than 1048576 bytes skipped");
  g_assert_cmpint (run.max_rss_kb, <, 48 * 1024);
  g_unlink (path);
  run_clear (&run);
}

static void
test_max_line_bytes_env (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_test_skip ("WICK_TRACE is not set");
      return;
    }
  g_autofree char *path = g_build_filename (runtime_dir, "meta.jsonl", NULL);
  g_assert_true (g_file_set_contents (path, meta_line, -1, NULL));
  static const char *const values[] = { "abc", "-1", "0", "12Q" };
  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    {
      const char *argv[] = { wick_trace, "summary", path, NULL };
      RunOptions options = { .env_name = "WICK_MAX_LINE_BYTES", .env_value = values[i] };
      Run run;
      run_tool_full (argv, 20, &options, &run);
      assert_exited (&run, 10);
      g_assert_cmpint (WEXITSTATUS (run.status), ==, 3);
      g_autofree char *expected = g_strdup_printf ("WICK_MAX_LINE_BYTES=“%s” is not a size", values[i]);
      assert_has (&run, expected);
      run_clear (&run);
    }
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = g_dir_make_tmp ("wick-hostile-XXXXXX", NULL);
  g_chmod (runtime_dir, 0700);
  g_test_add_func ("/hostile-producer/attach/truncate", test_truncate);
  g_test_add_func ("/hostile-producer/attach/meta-overflow", test_meta_overflow);
  g_test_add_func ("/hostile-producer/attach/commit-wrap-duration", test_commit_wrap_duration);
  g_test_add_func ("/hostile-producer/attach/commit-wrap-sigterm", test_commit_wrap_sigterm);
  g_test_add_func ("/hostile-producer/attach/names", test_names);
  g_test_add_data_func ("/hostile-producer/attach/snapshot-eventfd", "snapshot-eventfd",
                        test_snapshot);
  g_test_add_data_func ("/hostile-producer/attach/snapshot-fifo", "snapshot-fifo", test_snapshot);
  g_test_add_data_func ("/hostile-producer/attach/snapshot-deep", "snapshot-deep", test_snapshot);
  g_test_add_data_func ("/hostile-producer/attach/snapshot-lines", "snapshot-lines", test_snapshot);
  g_test_add_func ("/hostile-producer/sessions/silent", test_sessions_silent);
  g_test_add_func ("/hostile-producer/sessions/silent-many", test_sessions_silent_many);
  g_test_add_func ("/hostile-input/follow/fifo", test_follow_fifo);
  g_test_add_func ("/hostile-input/follow/fifo-renamed-over", test_follow_fifo_renamed_over);
  g_test_add_func ("/hostile-input/follow/long-line", test_follow_long_line);
  g_test_add_func ("/hostile-input/max-line-bytes-env", test_max_line_bytes_env);
  int status = g_test_run ();
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", runtime_dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", runtime_dir);
  return status;
}
