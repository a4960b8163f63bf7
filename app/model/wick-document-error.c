/* wick-document-error.c — the document error domain (see the header). */
#include "config.h"

#include "wick-document-error.h"

G_DEFINE_QUARK (wick - document - error - quark, wick_document_error)
