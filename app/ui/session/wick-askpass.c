/* wick-askpass.c — `wick-askpass PROMPT`: ssh's questions for Wick.
 *
 * The app runs ssh with SSH_ASKPASS naming this program and
 * SSH_ASKPASS_REQUIRE=force (app/client/wick-remote-link.c), so ssh, which has
 * no terminal there, asks here: it runs `wick-askpass PROMPT` and reads the
 * answer from its stdout. One dialog, by what ssh asks:
 *  - a host key to accept (the prompt asks "(yes/no…)"): Connect prints
 *    "yes", Do Not Connect exits 1 (ssh then refuses the host);
 *  - SSH_ASKPASS_PROMPT=confirm (an agent key used with ssh-add -c): Yes
 *    exits 0, No exits 1;
 *  - SSH_ASKPASS_PROMPT=none (touch your security key): shown until ssh ends
 *    it, Close exits 0;
 *  - anything else (a key's passphrase, a password, a server's question):
 *    a hidden entry, its text printed on Unlock, Cancel exits 1.
 * No answer within WICK_ASKPASS_TIMEOUT seconds (the app sets it; 120 when
 * unset) exits 2, so a dialog nobody answers never holds ssh. The prompt is
 * ssh's, which may carry a server's words: shown as plain text, at most
 * 2000 characters, control characters replaced.
 *
 * Besides the answer it tells the app, on stderr (ssh's, which the app reads),
 * "wick-askpass TOKEN: asking WHAT" (host-key, passphrase, password, answer,
 * confirmation, notice), then one of "answered", "refused" (a host key),
 * "cancelled", "timeout N", "failed WHY", with WICK_ASKPASS_TOKEN (set by the app in ssh's
 * environment; the node cannot write lines that pass for these).
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROMPT_MAX_CHARS 2000
#define DEFAULT_TIMEOUT_S 120

typedef enum
{
  ASK_SECRET,
  ASK_HOST_KEY,
  ASK_CONFIRM,
  ASK_NOTICE,
} AskKind;

typedef struct
{
  GMainLoop *loop;
  GtkWidget *entry;
  AskKind kind;
  int status;
  int timeout_s;
  gboolean done;
} Ask;

static void
tell (const char *what)
{
  const char *token = g_getenv ("WICK_ASKPASS_TOKEN");
  if (token != NULL)
    g_printerr ("wick-askpass %s: %s\n", token, what);
}

/* ssh's prompt as shown: valid UTF-8, bounded, no control characters but
 * newlines, no trailing blanks. */
static char *
clean_prompt (const char *prompt)
{
  g_autofree char *valid = g_utf8_make_valid (prompt, -1);
  GString *text = g_string_new (NULL);
  glong n = 0;
  const char *p = valid;
  for (; *p != '\0' && n < PROMPT_MAX_CHARS; p = g_utf8_next_char (p), n++)
    {
      gunichar c = g_utf8_get_char (p);
      if (c == '\n' || c == '\t')
        g_string_append_c (text, c == '\t' ? ' ' : '\n');
      else if (g_unichar_iscntrl (c) || c == 0x2028 || c == 0x2029)
        g_string_append_c (text, '?');
      else
        g_string_append_unichar (text, c);
    }
  if (*p != '\0')
    g_string_append (text, "…");
  g_strchomp (text->str);
  return g_string_free (text, FALSE);
}

static void
finish (Ask *ask, int status, const char *told)
{
  if (ask->done)
    return;
  ask->done = TRUE;
  ask->status = status;
  tell (told);
  g_main_loop_quit (ask->loop);
}

static void
on_response (AdwMessageDialog *dialog, const char *response, gpointer user_data)
{
  Ask *ask = user_data;
  if (g_str_equal (response, "ok"))
    {
      if (ask->kind == ASK_SECRET)
        {
          const char *secret = gtk_editable_get_text (GTK_EDITABLE (ask->entry));
          fputs (secret, stdout);
          fputc ('\n', stdout);
          fflush (stdout);
          gtk_editable_set_text (GTK_EDITABLE (ask->entry), "");
        }
      else if (ask->kind == ASK_HOST_KEY)
        {
          fputs ("yes\n", stdout);
          fflush (stdout);
        }
      finish (ask, 0, "answered");
      return;
    }
  if (ask->kind == ASK_NOTICE)
    finish (ask, 0, "answered");
  else
    finish (ask, 1, ask->kind == ASK_HOST_KEY ? "refused" : "cancelled");
}

static gboolean
on_deadline (gpointer user_data)
{
  Ask *ask = user_data;
  g_autofree char *told = g_strdup_printf ("timeout %d", ask->timeout_s);
  finish (ask, 2, told);
  return G_SOURCE_REMOVE;
}

static gboolean
closed_unanswered (gpointer user_data)
{
  Ask *ask = user_data;
  finish (ask, ask->kind == ASK_NOTICE ? 0 : 1,
          ask->kind == ASK_NOTICE ? "answered"
                                  : (ask->kind == ASK_HOST_KEY ? "refused" : "cancelled"));
  return G_SOURCE_REMOVE;
}

/* The dialog closes itself before its "response" (a button's): the window
 * closed without one is a cancel, judged once the response had its turn. */
static gboolean
on_close_request (GtkWindow *window, gpointer user_data)
{
  g_idle_add (closed_unanswered, user_data);
  return FALSE;
}

static void
quiet (const char *domain, GLogLevelFlags level, const char *message, gpointer user_data)
{
}

static AskKind
kind_of (const char *prompt)
{
  const char *hint = g_getenv ("SSH_ASKPASS_PROMPT");
  if (hint != NULL && g_ascii_strcasecmp (hint, "confirm") == 0)
    return ASK_CONFIRM;
  if (hint != NULL && g_ascii_strcasecmp (hint, "none") == 0)
    return ASK_NOTICE;
  /* ssh's host key question (sshconnect.c confirm()): "… (yes/no)?",
   * "(yes/no/[fingerprint])?", "Please type 'yes' or 'no':" */
  if (strstr (prompt, "(yes/no") != NULL || strstr (prompt, "type 'yes'") != NULL)
    return ASK_HOST_KEY;
  return ASK_SECRET;
}

/* The host key question without its last line (which asks to type yes, no
 * or the fingerprint: the buttons answer here). */
static char *
host_key_body (const char *prompt)
{
  g_autofree char *text = g_strdup (prompt);
  char *last = strrchr (text, '\n');
  if (last != NULL && (strstr (last, "yes") != NULL))
    *last = '\0';
  else if (last == NULL && strstr (text, "type 'yes'") != NULL)
    text[0] = '\0';
  return g_strdup_printf ("%s\n\n%s", g_strstrip (text),
                          _ ("Connect only if this fingerprint is the host's (ask its "
                             "administrator, or compare it with one you know). ssh then "
                             "remembers the key in ~/.ssh/known_hosts."));
}

int
main (int argc, char **argv)
{
  /* the build tree's catalogs when run from it (as main.c does) */
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  const char *catalogs = exe != NULL && g_str_has_prefix (exe, WICK_BUILD_DIR G_DIR_SEPARATOR_S)
                           ? WICK_BUILD_DIR G_DIR_SEPARATOR_S "po"
                           : WICK_LOCALEDIR;
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, catalogs);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_set_prgname ("wick-askpass");
  g_set_application_name (_ ("Wick"));
  if (argc != 2)
    {
      g_printerr ("usage: wick-askpass PROMPT (run by ssh as SSH_ASKPASS)\n");
      tell ("failed it was run without a prompt");
      return 3;
    }
  g_autofree char *prompt = clean_prompt (argv[1]);
  AskKind kind = kind_of (prompt);
  gboolean passphrase = strstr (prompt, "passphrase") != NULL;
  gboolean password = strstr (prompt, "password") != NULL || strstr (prompt, "Password") != NULL;
  tell (kind == ASK_HOST_KEY  ? "asking host-key"
        : kind == ASK_CONFIRM ? "asking confirmation"
        : kind == ASK_NOTICE  ? "asking notice"
        : passphrase          ? "asking passphrase"
        : password            ? "asking password"
                              : "asking answer");
  if (!gtk_init_check ())
    {
      g_printerr ("wick-askpass: cannot open a display to show ssh's question\n");
      tell ("failed there is no display to show it on");
      return 3;
    }
  adw_init ();
  /* no window of this program's to be transient for: said, not a problem */
  g_log_set_handler ("Adwaita", G_LOG_LEVEL_MESSAGE, quiet, NULL);
  Ask ask = { .status = 1, .timeout_s = DEFAULT_TIMEOUT_S };
  const char *timeout = g_getenv ("WICK_ASKPASS_TIMEOUT");
  if (timeout != NULL)
    {
      char *end;
      gint64 seconds = g_ascii_strtoll (timeout, &end, 10);
      if (end != timeout && *end == '\0' && seconds >= 1 && seconds <= 3600)
        ask.timeout_s = (int)seconds;
    }
  ask.kind = kind;
  ask.loop = g_main_loop_new (NULL, FALSE);

  const char *heading;
  g_autofree char *body = NULL;
  if (ask.kind == ASK_HOST_KEY)
    {
      heading = _ ("Unknown Host Key");
      body = host_key_body (prompt);
    }
  else if (ask.kind == ASK_CONFIRM)
    heading = _ ("ssh Asks to Confirm");
  else if (ask.kind == ASK_NOTICE)
    heading = _ ("ssh Is Waiting");
  else if (passphrase)
    heading = _ ("Key Passphrase for ssh");
  else if (password)
    heading = _ ("Password for ssh");
  else
    heading = _ ("ssh Asks");
  GtkWidget *dialog = adw_message_dialog_new (NULL, heading, body != NULL ? body : prompt);
  /* not translated: a name (the GUI test finds the window by it) */
  gtk_window_set_title (GTK_WINDOW (dialog), "Wick: ssh");
  gtk_window_set_default_size (GTK_WINDOW (dialog), 520, -1);
  /* hidden, not destroyed, by a response: GTK 4.8's password entry warns
   * when the key's release reaches it disposed */
  gtk_window_set_hide_on_close (GTK_WINDOW (dialog), TRUE);
  AdwMessageDialog *message = ADW_MESSAGE_DIALOG (dialog);
  switch (ask.kind)
    {
      case ASK_HOST_KEY:
        adw_message_dialog_add_responses (message, "cancel", _ ("_Do Not Connect"), "ok",
                                          _ ("_Connect"), NULL);
        /* no default: Enter does not accept a key unread */
        break;
      case ASK_CONFIRM:
        adw_message_dialog_add_responses (message, "cancel", _ ("_No"), "ok", _ ("_Yes"), NULL);
        break;
      case ASK_NOTICE:
        adw_message_dialog_add_responses (message, "cancel", _ ("_Close"), NULL);
        break;
      case ASK_SECRET:
        adw_message_dialog_add_responses (message, "cancel", _ ("_Cancel"), "ok", _ ("_Unlock"),
                                          NULL);
        adw_message_dialog_set_response_appearance (message, "ok", ADW_RESPONSE_SUGGESTED);
        adw_message_dialog_set_default_response (message, "ok");
        ask.entry = gtk_password_entry_new ();
        gtk_password_entry_set_show_peek_icon (GTK_PASSWORD_ENTRY (ask.entry), TRUE);
        g_object_set (ask.entry, "activates-default", TRUE, NULL);
        adw_message_dialog_set_extra_child (message, ask.entry);
        break;
    }
  adw_message_dialog_set_close_response (message, "cancel");
  g_signal_connect (dialog, "response", G_CALLBACK (on_response), &ask);
  g_signal_connect (dialog, "close-request", G_CALLBACK (on_close_request), &ask);
  g_timeout_add_seconds (ask.timeout_s, on_deadline, &ask);
  gtk_window_present (GTK_WINDOW (dialog));
  if (ask.entry != NULL)
    gtk_widget_grab_focus (ask.entry);
  g_main_loop_run (ask.loop);
  if (ask.status == 2 && g_getenv ("WICK_ASKPASS_TOKEN") == NULL)
    {
      g_autofree char *first = g_strndup (prompt, strcspn (prompt, "\n"));
      g_printerr ("wick-askpass: no answer within %d s to “%s”\n", ask.timeout_s, first);
    }
  g_main_loop_unref (ask.loop);
  /* exits without tearing the dialog down: the answer is out */
  return ask.status;
}
