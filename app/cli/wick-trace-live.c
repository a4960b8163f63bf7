/* wick-trace-live.c — `wick-trace sessions`, `attach` and `control`.
 *
 *   sessions [--json]                    live sessions of this user
 *   attach [--duration S] [--strict] --output FILE PID
 *                                        save the live session as trace/10
 *   control PID COMMAND [ARGS...]        one control command, reply as JSON
 *
 * attach reads the session's ring (follow mode: it never slows the process)
 * through libwick's formatter, so the file parses by candle-graph's rules even
 * when attached mid-run (open spans are synthesized) or cut before the process
 * finishes (a failed terminal whose reason says why). Exit status: 0 done,
 * 1 the session refused a control command (its reply is printed), 3 usage,
 * connection or I/O error.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/wick-live-client.h"
#include "client/wick-follow-file.h"
#include "client/wick-live-stream.h"
#include "wick-document.h"
#include "wick-input.h"
#include "wick-trace-commands.h"
#include "wick-trace-remote.h"
#include "wick-trace-sessions.h"

#define ATTACH_POLL_US 10000
#define FOLLOW_POLL_BYTES (64 << 20)

static volatile sig_atomic_t attach_interrupted;

static gboolean
parse_pid (const char *text, gint64 *pid)
{
  char *end;
  errno = 0;
  gint64 value = g_ascii_strtoll (text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value <= 0 || value > G_MAXINT32)
    return FALSE;
  *pid = value;
  return TRUE;
}

/* ---- sessions ---- */

int
wick_trace_sessions (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON array of the sessions", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "sessions", "", "The live sessions of this user (processes recording with control enabled).",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (argc > 1)
    return wick_trace_usage_error ("sessions", "unexpected argument “%s”", argv[1]);
  if (wick_trace_remotes != NULL)
    return wick_trace_remote_sessions (json);
  g_autoptr (GError) error = NULL;
  /* Sessions that exist but do not answer are listed too, with why: a stopped
   * or busy process is never reported as absent. */
  g_autoptr (GPtrArray) sessions = wick_live_list_all_sessions (&error);
  if (sessions == NULL)
    {
      fprintf (stderr, "wick-trace: sessions: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  wick_trace_print_sessions (sessions, json);
  return WICK_TRACE_EXIT_OK;
}


/* ---- attach ---- */

typedef struct
{
  FILE *file;
  const char *path;
  gboolean write_failed;
} AttachOutput;

static void
write_line (const char *line, gsize length, gpointer user_data)
{
  AttachOutput *output = user_data;
  if (fwrite (line, 1, length, output->file) != length || fputc ('\n', output->file) == EOF)
    output->write_failed = TRUE;
}

static void
on_interrupt (int signal_number)
{
  attach_interrupted = 1;
}

/* Connects, says hello and opens the ring of the session of @pid. */
static WickLiveStream *
open_stream (gint64 pid, gboolean strict, WickLiveSessionInfo **info_out, GError **error)
{
  g_autofree char *socket_path = wick_live_find_socket (pid, error);
  if (socket_path == NULL)
    return NULL;
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, error);
  if (connection == NULL)
    return NULL;
  g_autoptr (GError) snapshot_error = NULL;
  WickLiveStream *stream
    = wick_live_stream_attach (connection, strict, info_out, &snapshot_error, error);
  if (stream != NULL && snapshot_error != NULL)
    fprintf (stderr,
             "wick-trace: attach: no attach snapshot (%s): storages allocated before the "
             "attach are missing from the capture\n",
             snapshot_error->message);
  return stream;
}

/* Why the capture ends without the session's own terminal. A ring that
 * broke is named with the reader's sentence. */
static char *
attach_cut_reason (WickLiveStream *stream, WickProducerState state, gboolean interrupted,
                   double duration, gint64 pid)
{
  WickRingReaderStats stats;
  wick_live_stream_get_reader_stats (stream, &stats);
  g_autofree char *why = NULL;
  if (state == WICK_PRODUCER_DEAD)
    why = g_strdup_printf ("the process (pid %" G_GINT64_FORMAT ") exited without finishing its "
                           "trace",
                           pid);
  else if (state == WICK_PRODUCER_FINISHED)
    why = g_strdup ("the process finished, but its terminal record was not read");
  else if (interrupted)
    why = g_strdup ("wick-trace attach was interrupted while the process was still running");
  else
    why = g_strdup_printf ("wick-trace attach stopped after %g s while the process was still "
                           "running",
                           duration);
  if (stats.broken_rings > 0)
    return g_strdup_printf ("capture cut: %s; the ring broke: %s", why, stats.first_error);
  return g_strdup_printf ("capture cut: %s", why);
}

static void
attach_loop (WickLiveStream *stream, AttachOutput *output, double duration)
{
  gint64 deadline = duration > 0 ? g_get_monotonic_time () + (gint64)(duration * 1e6) : G_MAXINT64;
  for (;;)
    {
      wick_live_stream_drain (stream, 0, write_line, output);
      if (wick_live_stream_has_terminal (stream) || output->write_failed)
        return;
      WickProducerState state = wick_live_stream_get_producer_state (stream);
      if (state != WICK_PRODUCER_RUNNING)
        {
          /* Whatever the producer committed before it stopped. */
          wick_live_stream_drain (stream, 0, write_line, output);
          return;
        }
      if (attach_interrupted || g_get_monotonic_time () >= deadline)
        return;
      g_usleep (ATTACH_POLL_US);
    }
}

/* ---- attach --follow FILE ---- */

typedef struct
{
  AttachOutput *output;
  WickDocument *document;
  gboolean bad; /* a line the model refused: reported once, the rest still copied */
  guint64 line;
} FollowOutput;

static void
follow_line (const char *line, gsize length, gpointer user_data)
{
  FollowOutput *follow = user_data;
  follow->line++;
  write_line (line, length, follow->output);
  g_autoptr (GError) error = NULL;
  if (!follow->bad && !wick_document_feed_line (follow->document, line, length, &error))
    {
      follow->bad = TRUE;
      fprintf (stderr, "wick-trace: attach: line %" G_GUINT64_FORMAT " of the followed file: %s\n",
               follow->line, error != NULL ? error->message : "not a trace line");
    }
}

static int
attach_follow (const char *path, double duration, const char *output_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickFollowFile) file = wick_follow_file_new (path, &error);
  if (file == NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  AttachOutput output = { fopen (output_path, "w"), output_path, FALSE };
  if (output.file == NULL)
    {
      fprintf (stderr, "wick-trace: attach: cannot write %s: %s\n", output_path,
               g_strerror (errno));
      return WICK_TRACE_EXIT_USAGE;
    }
  FollowOutput follow = { &output, wick_document_new_with_extensions (TRUE), FALSE, 0 };
  attach_interrupted = 0;
  struct sigaction action = { .sa_handler = on_interrupt }, old_int, old_term;
  sigaction (SIGINT, &action, &old_int);
  sigaction (SIGTERM, &action, &old_term);
  gint64 deadline = duration > 0 ? g_get_monotonic_time () + (gint64)(duration * 1e6) : G_MAXINT64;
  gboolean ended = FALSE;
  while (!ended && !attach_interrupted && !output.write_failed)
    {
      g_autofree char *restarted = NULL;
      /* a budget per poll: --duration and signals are looked at between */
      if (wick_follow_file_poll (file, FOLLOW_POLL_BYTES, follow_line, &follow, &restarted, &error)
          < 0)
        break;
      if (restarted != NULL)
        {
          /* Start over: the file written so far belonged to the old content. */
          fprintf (stderr, "wick-trace: attach: %s\n", restarted);
          fflush (output.file);
          if (ftruncate (fileno (output.file), 0) != 0 || fseek (output.file, 0, SEEK_SET) != 0)
            output.write_failed = TRUE;
          g_object_unref (follow.document);
          follow.document = wick_document_new_with_extensions (TRUE);
          follow.bad = FALSE;
          follow.line = 0;
          wick_follow_file_poll (file, FOLLOW_POLL_BYTES, follow_line, &follow, NULL, &error);
        }
      ended = wick_document_has_terminal (follow.document);
      if (!ended && g_get_monotonic_time () >= deadline)
        break;
      if (!ended)
        g_usleep (ATTACH_POLL_US);
    }
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGTERM, &old_term, NULL);
  int status = WICK_TRACE_EXIT_OK;
  if (error != NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s\n", error->message);
      status = WICK_TRACE_EXIT_USAGE;
    }
  gsize partial = wick_follow_file_get_pending (file);
  if (!ended && follow.line > 0)
    {
      g_autofree char *terminal = g_strdup_printf (
        "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":%" G_GUINT64_FORMAT
        ",\"reason\":\"capture cut: wick-trace attach --follow %s before the trace ended\"}",
        wick_document_get_end_ns (follow.document),
        attach_interrupted ? "was interrupted" : "stopped");
      write_line (terminal, strlen (terminal), &output);
    }
  if (fclose (output.file) != 0 || output.write_failed)
    {
      fprintf (stderr, "wick-trace: attach: writing %s failed: %s\n", output_path,
               g_strerror (errno));
      status = WICK_TRACE_EXIT_USAGE;
    }
  guint64 skipped = wick_follow_file_get_skipped_lines (file);
  g_autofree char *skipped_text
    = skipped > 0 ? g_strdup_printf ("; %" G_GUINT64_FORMAT " line(s) longer than %" G_GSIZE_FORMAT
                                     " bytes skipped (WICK_MAX_LINE_BYTES, --max-line-bytes)",
                                     skipped, wick_max_line_length ())
                  : g_strdup ("");
  fprintf (stderr,
           "wick-trace: followed %s: %" G_GUINT64_FORMAT " lines to %s%s; %u restart(s)%s%s\n",
           path, follow.line, output_path, ended ? "; the trace ended" : "",
           wick_follow_file_get_restarts (file),
           partial > 0 ? "; a partial last line (no newline yet) was left out" : "", skipped_text);
  g_object_unref (follow.document);
  return status;
}

int
wick_trace_attach (int argc, char **argv)
{
  double duration = 0;
  gboolean strict = FALSE;
  g_autofree char *output_path = NULL, *follow = NULL, *duration_text = NULL;
  gint64 pid = 0;
  const GOptionEntry entries[] = {
    { "output", 0, 0, G_OPTION_ARG_FILENAME, &output_path, "The trace to write (required)",
      "FILE" },
    { "duration", 0, 0, G_OPTION_ARG_STRING, &duration_text,
      "Stop after this many seconds (default: until the session or the file ends)", "SECONDS" },
    { "strict", 0, 0, G_OPTION_ARG_NONE, &strict,
      "Pure candle-graph trace/10: no Wick extension records", NULL },
    { "follow", 0, 0, G_OPTION_ARG_FILENAME, &follow,
      "Follow a growing JSONL file instead of a live session (no PID)", "TRACE" },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "attach", "PID | --follow TRACE",
    "Save a live session (read from its ring, never slowing it) or a growing JSONL file as a "
    "trace that parses by candle-graph's rules, even when cut before the end.",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (duration_text != NULL)
    {
      char *end;
      duration = g_ascii_strtod (duration_text, &end);
      if (end == duration_text || *end != '\0' || !(duration > 0) || duration > 1e7)
        return wick_trace_usage_error ("attach", "--duration needs seconds above 0, not “%s”",
                                       duration_text);
    }
  if (output_path == NULL)
    return wick_trace_usage_error ("attach", "--output is required");
  if (follow != NULL && (argc > 1 || strict))
    return wick_trace_usage_error ("attach", "--follow takes no PID and no --strict");
  if (follow == NULL && argc != 2)
    return wick_trace_usage_error ("attach", argc < 2 ? "a PID (or --follow TRACE) is required"
                                                      : "only one PID may be given");
  if (follow == NULL && !parse_pid (argv[1], &pid))
    return wick_trace_usage_error ("attach", "“%s” is not a process id", argv[1]);
  if (follow != NULL && wick_trace_remotes != NULL)
    return wick_trace_usage_error ("attach", "--follow reads a local file: not with --remote");
  if (follow != NULL)
    return attach_follow (follow, duration, output_path);
  if (wick_trace_remotes != NULL)
    return wick_trace_remote_attach (pid, strict, duration, output_path);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveSessionInfo) info = NULL;
  g_autoptr (WickLiveStream) stream = open_stream (pid, strict, &info, &error);
  if (stream == NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  AttachOutput output = { fopen (output_path, "w"), output_path, FALSE };
  if (output.file == NULL)
    {
      fprintf (stderr, "wick-trace: attach: cannot write %s: %s\n", output_path,
               g_strerror (errno));
      return WICK_TRACE_EXIT_USAGE;
    }
  attach_interrupted = 0;
  struct sigaction action = { .sa_handler = on_interrupt }, old_int, old_term;
  sigaction (SIGINT, &action, &old_int);
  sigaction (SIGTERM, &action, &old_term);
  attach_loop (stream, &output, duration);
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGTERM, &old_term, NULL);

  g_autofree char *reason = attach_cut_reason (stream, wick_live_stream_get_producer_state (stream),
                                               attach_interrupted, duration, pid);
  wick_live_stream_finish (stream, reason, write_line, &output);
  if (fclose (output.file) != 0 || output.write_failed)
    {
      fprintf (stderr, "wick-trace: attach: writing %s failed: %s\n", output_path,
               g_strerror (errno));
      return WICK_TRACE_EXIT_USAGE;
    }
  WickRingReaderStats stats;
  wick_live_stream_get_reader_stats (stream, &stats);
  g_autofree char *broken
    = stats.broken_rings > 0
        ? g_strdup_printf ("; %u ring(s) broke: %s", stats.broken_rings, stats.first_error)
        : g_strdup ("");
  g_autofree char *detached
    = stats.detached_readers > 0
        ? g_strdup_printf ("; the process detached %" G_GUINT64_FORMAT
                           " stalled hold reader(s)",
                           stats.detached_readers)
        : g_strdup ("");
  guint64 names_cut = wick_live_stream_get_names_cut (stream);
  g_autofree char *cut
    = names_cut > 0
        ? g_strdup_printf ("; %" G_GUINT64_FORMAT " long names cut (a name keeps %d bytes, "
                           "docs/ring.md)",
                           names_cut, WICK_RING_READER_MAX_NAME_BYTES)
        : g_strdup ("");
  fprintf (stderr,
           "wick-trace: attached to %s (pid %" G_GINT64_FORMAT "): %" G_GUINT64_FORMAT
           " records, %" G_GUINT64_FORMAT " lines to %s; %" G_GUINT64_FORMAT
           " dropped by the process, %" G_GUINT64_FORMAT " lost by this reader%s%s%s%s\n",
           info->program, pid, wick_live_stream_get_records (stream),
           wick_live_stream_get_lines (stream), output_path, wick_live_stream_get_dropped (stream),
           wick_live_stream_get_lost (stream), broken, detached, cut,
           wick_live_stream_has_terminal (stream) ? "; the session finished" : "");
  return WICK_TRACE_EXIT_OK;
}

/* ---- control ---- */

typedef struct
{
  const char *name;
  const char *operand; /* member filled by the positional argument, NULL for none */
  const char *usage;
} ControlCommand;

static const ControlCommand control_commands[] = {
  { "hello", NULL, "hello" },
  { "list", NULL, "list" },
  { "evict", "module", "evict MODULE [--tier auto|disk|ram]" },
  { "restore", "module", "restore MODULE" },
  { "restore-all", NULL, "restore-all" },
  { "capture", "stage", "capture STAGE [--gate-cos X] [--min-speedup Y] [--warmup N]" },
  { "release", "stage", "release STAGE" },
  { "mark", "label", "mark LABEL" },
};

static const ControlCommand *
find_control_command (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (control_commands); i++)
    if (strcmp (control_commands[i].name, name) == 0)
      return &control_commands[i];
  return NULL;
}

static gboolean
parse_number_option (const char *text, double *value)
{
  char *end;
  *value = g_ascii_strtod (text, &end);
  return end != text && *end == '\0';
}

/* The options of the control commands, each of one command. */
typedef struct
{
  char *tier;
  char *gate_cos;
  char *min_speedup;
  char *warmup;
} ControlOptions;

static void
control_options_clear (ControlOptions *options)
{
  g_free (options->tier);
  g_free (options->gate_cos);
  g_free (options->min_speedup);
  g_free (options->warmup);
}

/* Sets the request's member for an option given; FALSE after the usage error
 * naming the option. */
static gboolean
add_option (JsonObject *request, const ControlCommand *command, const char *option,
            const char *value)
{
  double number;
  gboolean evict = strcmp (command->name, "evict") == 0;
  if (value == NULL)
    return TRUE;
  if (strcmp (option, "--tier") == 0 ? !evict : strcmp (command->name, "capture") != 0)
    {
      wick_trace_usage_error ("control", "%s is an option of “%s”, not of “%s”", option,
                              evict || strcmp (option, "--tier") == 0 ? "evict" : "capture",
                              command->name);
      return FALSE;
    }
  if (strcmp (option, "--tier") == 0)
    {
      if (strcmp (value, "auto") != 0 && strcmp (value, "disk") != 0 && strcmp (value, "ram") != 0)
        {
          wick_trace_usage_error ("control", "--tier must be auto, disk or ram, not “%s”", value);
          return FALSE;
        }
      json_object_set_string_member (request, "tier", value);
      return TRUE;
    }
  gboolean warmup = strcmp (option, "--warmup") == 0;
  if (!parse_number_option (value, &number)
      || (warmup && !(number >= 0 && number == (gint64)number)))
    {
      wick_trace_usage_error ("control", "%s needs %s, not “%s”", option,
                              warmup ? "a whole number of steps" : "a number", value);
      return FALSE;
    }
  if (warmup)
    json_object_set_int_member (request, "warmup", (gint64)number);
  else
    json_object_set_double_member (
      request, strcmp (option, "--gate-cos") == 0 ? "gate_cos" : "min_speedup", number);
  return TRUE;
}

/* The request of @command with its operands (after PID and COMMAND) and
 * options; NULL after the usage error. */
static JsonObject *
build_control_request (const ControlCommand *command, int argc, char **argv,
                       const ControlOptions *options)
{
  g_autoptr (JsonObject) request = wick_live_request_new (command->name);
  if (argc > (command->operand != NULL ? 1 : 0))
    {
      wick_trace_usage_error ("control", "unexpected argument “%s”; usage: control PID %s",
                              argv[command->operand != NULL ? 1 : 0], command->usage);
      return NULL;
    }
  if (command->operand != NULL)
    {
      if (argc == 0)
        {
          wick_trace_usage_error ("control", "“%s” needs its operand; usage: control PID %s",
                                  command->name, command->usage);
          return NULL;
        }
      json_object_set_string_member (request, command->operand, argv[0]);
    }
  if (!add_option (request, command, "--tier", options->tier)
      || !add_option (request, command, "--gate-cos", options->gate_cos)
      || !add_option (request, command, "--min-speedup", options->min_speedup)
      || !add_option (request, command, "--warmup", options->warmup))
    return NULL;
  return g_steal_pointer (&request);
}


static char *
control_commands_text (void)
{
  GString *text = g_string_new ("Commands:");
  for (gsize i = 0; i < G_N_ELEMENTS (control_commands); i++)
    g_string_append_printf (text, "\n  %s", control_commands[i].usage);
  g_string_append (text, "\n\nThe reply is printed as one JSON line. Exit status: 0 done, 1 the "
                         "session refused the command, 3 usage or connection error.");
  return g_string_free (text, FALSE);
}

int
wick_trace_control (int argc, char **argv)
{
  gint64 pid;
  ControlOptions options = { 0 };
  const GOptionEntry entries[] = {
    { "tier", 0, 0, G_OPTION_ARG_STRING, &options.tier,
      "evict: where the parameters go: auto, disk or ram", "TIER" },
    { "gate-cos", 0, 0, G_OPTION_ARG_STRING, &options.gate_cos,
      "capture: the parity gate's cosine similarity", "X" },
    { "min-speedup", 0, 0, G_OPTION_ARG_STRING, &options.min_speedup,
      "capture: the speed-up gate's median", "Y" },
    { "warmup", 0, 0, G_OPTION_ARG_STRING, &options.warmup,
      "capture: eager steps before the capture", "N" },
    G_OPTION_ENTRY_NULL,
  };
  g_autofree char *summary = control_commands_text ();
  g_autoptr (JsonObject) request = NULL;
  int parsed = wick_trace_parse_options ("control", "PID COMMAND [OPERAND]", summary, entries,
                                         FALSE, &argc, &argv);
  if (parsed >= 0)
    {
      control_options_clear (&options);
      return parsed;
    }
  if (argc < 3)
    parsed = wick_trace_usage_error ("control", "a PID and a COMMAND are required");
  else if (!parse_pid (argv[1], &pid))
    parsed = wick_trace_usage_error ("control", "“%s” is not a process id", argv[1]);
  else
    {
      const ControlCommand *command = find_control_command (argv[2]);
      if (command == NULL)
        parsed = wick_trace_usage_error ("control", "unknown command “%s”", argv[2]);
      else if ((request = build_control_request (command, argc - 3, argv + 3, &options)) == NULL)
        parsed = WICK_TRACE_EXIT_USAGE;
    }
  control_options_clear (&options);
  if (parsed >= 0)
    return parsed;
  const char *name = json_object_get_string_member (request, "command");
  if (wick_trace_remotes != NULL)
    return wick_trace_remote_control (pid, request);

  g_autoptr (GError) error = NULL;
  g_autofree char *socket_path = wick_live_find_socket (pid, &error);
  if (socket_path == NULL)
    return wick_trace_print_control_error (error->message);
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, &error);
  if (connection == NULL)
    return wick_trace_print_control_error (error->message);
  int timeout
    = strcmp (name, "capture") == 0 ? WICK_LIVE_CAPTURE_TIMEOUT_MS : WICK_LIVE_REQUEST_TIMEOUT_MS;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, request, timeout, NULL, &error);
  if (reply == NULL)
    return wick_trace_print_control_error (error->message);
  json_object_remove_member (reply, "v");
  wick_trace_print_json (reply);
  return json_object_get_boolean_member_with_default (reply, "ok", FALSE) ? WICK_TRACE_EXIT_OK
                                                                          : WICK_TRACE_EXIT_HEALTH;
}
