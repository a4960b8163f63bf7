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

#include "live/wick-live-client.h"
#include "live/wick-follow-file.h"
#include "live/wick-live-stream.h"
#include "wick-document.h"
#include "wick-trace-commands.h"

#define ATTACH_POLL_US 10000

static volatile sig_atomic_t attach_interrupted;

static int usage_error (const char *format, ...) G_GNUC_PRINTF (1, 2);

static int
usage_error (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  fprintf (stderr, "wick-trace: ");
  vfprintf (stderr, format, args);
  fprintf (stderr, "\n");
  va_end (args);
  return WICK_TRACE_EXIT_USAGE;
}

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

static void
print_json_object (JsonObject *object)
{
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  g_autofree char *text = json_to_string (node, FALSE);
  printf ("%s\n", text);
}

/* ---- sessions ---- */

static const char *
session_status (const WickLiveSessionInfo *info)
{
  return info->problem == NULL ? "answering" : info->busy ? "busy" : "not answering";
}

static JsonObject *
session_to_json (const WickLiveSessionInfo *info)
{
  JsonObject *object = json_object_new ();
  json_object_set_int_member (object, "pid", info->pid);
  json_object_set_string_member (object, "status", session_status (info));
  if (info->problem != NULL)
    {
      json_object_set_string_member (object, "problem", info->problem);
      json_object_set_string_member (object, "socket", info->socket_path);
      return object;
    }
  json_object_set_string_member (object, "program", info->program);
  json_object_set_string_member (object, "entrypoint", info->entrypoint);
  json_object_set_string_member (object, "started", info->started);
  json_object_set_int_member (object, "started_unix_ns", (gint64)info->started_unix_ns);
  json_object_set_int_member (object, "dropped", (gint64)info->dropped);
  json_object_set_string_member (object, "policy", info->policy);
  json_object_set_boolean_member (object, "finished", info->finished);
  if (info->run_id != NULL)
    json_object_set_string_member (object, "run_id", info->run_id);
  json_object_set_string_member (object, "socket", info->socket_path);
  return object;
}

int
wick_trace_sessions (int argc, char **argv)
{
  gboolean json = FALSE;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = TRUE;
      else
        return usage_error ("sessions: unexpected argument “%s” (usage: sessions [--json])",
                            argv[i]);
    }
  g_autoptr (GError) error = NULL;
  /* Sessions that exist but do not answer are listed too, with why: a stopped
   * or busy process is never reported as absent. */
  g_autoptr (GPtrArray) sessions = wick_live_list_all_sessions (&error);
  if (sessions == NULL)
    {
      fprintf (stderr, "wick-trace: sessions: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (json)
    {
      g_autoptr (JsonArray) array = json_array_new ();
      for (guint i = 0; i < sessions->len; i++)
        json_array_add_object_element (array, session_to_json (g_ptr_array_index (sessions, i)));
      g_autoptr (JsonNode) node = json_node_new (JSON_NODE_ARRAY);
      json_node_set_array (node, array);
      g_autofree char *text = json_to_string (node, FALSE);
      printf ("%s\n", text);
      return WICK_TRACE_EXIT_OK;
    }
  if (sessions->len == 0)
    {
      printf ("No live sessions. Start a program with control enabled (e.g. WICK_CONTROL=1).\n");
      return WICK_TRACE_EXIT_OK;
    }
  printf ("%-8s %-20s %-24s %-24s %8s\n", "PID", "PROGRAM", "ENTRYPOINT", "STARTED", "DROPPED");
  for (guint i = 0; i < sessions->len; i++)
    {
      const WickLiveSessionInfo *info = g_ptr_array_index (sessions, i);
      if (info->problem != NULL)
        {
          printf ("%-8" G_GINT64_FORMAT " %s (%s)\n", info->pid, session_status (info),
                  info->problem);
          continue;
        }
      printf ("%-8" G_GINT64_FORMAT " %-20s %-24s %-24s %8" G_GUINT64_FORMAT "%s\n", info->pid,
              info->program, info->entrypoint, info->started, info->dropped,
              info->finished ? "  (finished)" : "");
    }
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
 * broke is named with the reader's sentence (issue 10, item 6). */
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
      if (wick_follow_file_poll (file, 0, follow_line, &follow, &restarted, &error) < 0)
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
          wick_follow_file_poll (file, 0, follow_line, &follow, NULL, &error);
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
  fprintf (stderr,
           "wick-trace: followed %s: %" G_GUINT64_FORMAT " lines to %s%s; %u restart(s)%s\n",
           path, follow.line, output_path, ended ? "; the trace ended" : "",
           wick_follow_file_get_restarts (file),
           partial > 0 ? "; a partial last line (no newline yet) was left out" : "");
  g_object_unref (follow.document);
  return status;
}

static gboolean
parse_attach_args (int argc, char **argv, double *duration, gboolean *strict, const char **output,
                   gint64 *pid, const char **follow)
{
  const char *pid_text = NULL;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--follow") == 0 && i + 1 < argc)
        {
          *follow = argv[++i];
          continue;
        }
      if (strcmp (argv[i], "--duration") == 0 && i + 1 < argc)
        {
          char *end;
          *duration = g_ascii_strtod (argv[++i], &end);
          if (*end != '\0' || !(*duration > 0) || *duration > 1e7)
            return FALSE;
        }
      else if (strcmp (argv[i], "--output") == 0 && i + 1 < argc)
        *output = argv[++i];
      else if (strcmp (argv[i], "--strict") == 0)
        *strict = TRUE;
      else if (argv[i][0] != '-' && pid_text == NULL)
        pid_text = argv[i];
      else
        return FALSE;
    }
  if (*follow != NULL)
    return *output != NULL && pid_text == NULL && !*strict;
  return *output != NULL && pid_text != NULL && parse_pid (pid_text, pid);
}

int
wick_trace_attach (int argc, char **argv)
{
  double duration = 0;
  gboolean strict = FALSE;
  const char *output_path = NULL;
  gint64 pid = 0;
  const char *follow = NULL;
  if (!parse_attach_args (argc, argv, &duration, &strict, &output_path, &pid, &follow))
    return usage_error ("%s", "attach: usage: attach [--duration SECONDS] [--strict] "
                              "--output FILE PID, or attach --follow TRACE.jsonl "
                              "[--duration SECONDS] --output FILE");
  if (follow != NULL)
    return attach_follow (follow, duration, output_path);
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
  fprintf (stderr,
           "wick-trace: attached to %s (pid %" G_GINT64_FORMAT "): %" G_GUINT64_FORMAT
           " records, %" G_GUINT64_FORMAT " lines to %s; %" G_GUINT64_FORMAT
           " dropped by the process, %" G_GUINT64_FORMAT " lost by this reader%s%s%s\n",
           info->program, pid, wick_live_stream_get_records (stream),
           wick_live_stream_get_lines (stream), output_path, wick_live_stream_get_dropped (stream),
           wick_live_stream_get_lost (stream), broken, detached,
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

/* Adds one --option VALUE of @command to @request; FALSE when it is not one. */
static gboolean
add_option (JsonObject *request, const ControlCommand *command, const char *option,
            const char *value)
{
  double number;
  if (strcmp (command->name, "evict") == 0 && strcmp (option, "--tier") == 0)
    {
      if (strcmp (value, "auto") != 0 && strcmp (value, "disk") != 0 && strcmp (value, "ram") != 0)
        return FALSE;
      json_object_set_string_member (request, "tier", value);
      return TRUE;
    }
  if (strcmp (command->name, "capture") != 0 || !parse_number_option (value, &number))
    return FALSE;
  if (strcmp (option, "--gate-cos") == 0)
    json_object_set_double_member (request, "gate_cos", number);
  else if (strcmp (option, "--min-speedup") == 0)
    json_object_set_double_member (request, "min_speedup", number);
  else if (strcmp (option, "--warmup") == 0 && number >= 0 && number == (gint64)number)
    json_object_set_int_member (request, "warmup", (gint64)number);
  else
    return FALSE;
  return TRUE;
}

static JsonObject *
build_control_request (const ControlCommand *command, int argc, char **argv)
{
  g_autoptr (JsonObject) request = wick_live_request_new (command->name);
  gboolean have_operand = FALSE;
  for (int i = 0; i < argc; i++)
    {
      if (g_str_has_prefix (argv[i], "--"))
        {
          if (i + 1 >= argc || !add_option (request, command, argv[i], argv[i + 1]))
            return NULL;
          i++;
        }
      else if (command->operand != NULL && !have_operand)
        {
          json_object_set_string_member (request, command->operand, argv[i]);
          have_operand = TRUE;
        }
      else
        return NULL;
    }
  if (command->operand != NULL && !have_operand)
    return NULL;
  return g_steal_pointer (&request);
}

static int
print_control_error (const char *message)
{
  g_autoptr (JsonObject) reply = json_object_new ();
  json_object_set_boolean_member (reply, "ok", FALSE);
  json_object_set_string_member (reply, "error", message);
  print_json_object (reply);
  return WICK_TRACE_EXIT_USAGE;
}

static int
control_usage (void)
{
  GString *text = g_string_new ("control: usage: control PID COMMAND [ARGS...]; commands:");
  for (gsize i = 0; i < G_N_ELEMENTS (control_commands); i++)
    g_string_append_printf (text, "\n  %s", control_commands[i].usage);
  int status = usage_error ("%s", text->str);
  g_string_free (text, TRUE);
  return status;
}

int
wick_trace_control (int argc, char **argv)
{
  gint64 pid;
  if (argc < 3 || !parse_pid (argv[1], &pid))
    return control_usage ();
  const ControlCommand *command = find_control_command (argv[2]);
  if (command == NULL)
    return control_usage ();
  g_autoptr (JsonObject) request = build_control_request (command, argc - 3, argv + 3);
  if (request == NULL)
    return usage_error ("control: usage: control PID %s", command->usage);

  g_autoptr (GError) error = NULL;
  g_autofree char *socket_path = wick_live_find_socket (pid, &error);
  if (socket_path == NULL)
    return print_control_error (error->message);
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, &error);
  if (connection == NULL)
    return print_control_error (error->message);
  int timeout = strcmp (command->name, "capture") == 0 ? WICK_LIVE_CAPTURE_TIMEOUT_MS
                                                       : WICK_LIVE_REQUEST_TIMEOUT_MS;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, request, timeout, NULL, &error);
  if (reply == NULL)
    return print_control_error (error->message);
  json_object_remove_member (reply, "v");
  print_json_object (reply);
  return json_object_get_boolean_member_with_default (reply, "ok", FALSE) ? WICK_TRACE_EXIT_OK
                                                                          : WICK_TRACE_EXIT_HEALTH;
}
