/* wick-gpu-pages.h — the pages of a GPU trace: Overview, Kernels, Operators.
 *
 * All three read the document's GPU analysis (model/wick-gpu-analysis.h,
 * computed once per document; docs/gpu.md defines every figure) and are
 * shown by the window only when it has GPU work (a kernel, memcpy or
 * memset).
 *
 * Kernels and Operators are tables (wick-table.h): kernels by name with
 * count, total, mean, min, max, share of GPU time and, when the trace has
 * them, grid, block and registers per thread; operators (cpu_op) with
 * count, CPU self and total time, GPU time of what they launched and, when
 * recorded, input shapes. Every column sorts; the entry filters; selecting
 * a row emits "instances" with every slice of that row (kernels: device
 * slices; operators: host slices) by start, which the window makes the
 * timeline's matches, stepping through them with the page's previous/next
 * buttons ("step"). Ctrl+C copies the selected row as TSV; the page's menu
 * copies it or every row shown (wick_table_to_tsv()).
 *
 * Overview: a stacked bar per ProfilerStep (compute, communication,
 * memcpy, CPU-only and idle time, adding up to the step's duration), the
 * slow steps marked, a table of the same beneath; the devices' busy,
 * kernel, memcpy, memset and communication time; the launch figures.
 *
 * Each is a WickPage reading its session's GPU analysis
 * (wick_trace_session_get_gpu_analysis()); its table is built when the page
 * is shown, not when the document is set (set_document included).
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-table.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_GPU_TABLE_KERNELS,
  WICK_GPU_TABLE_OPERATORS,
} WickGpuTableKind;

#define WICK_TYPE_GPU_TABLE_PAGE (wick_gpu_table_page_get_type ())
G_DECLARE_FINAL_TYPE (WickGpuTablePage, wick_gpu_table_page, WICK, GPU_TABLE_PAGE, WickPage)

GtkWidget *wick_gpu_table_page_new (WickSelection *selection, WickGpuTableKind kind);
/* The instance the timeline shows (@current of @n; -1 for none): the label
 * beside the previous/next buttons. */
void wick_gpu_table_page_set_position (WickGpuTablePage *self, gint current, guint n);

#define WICK_TYPE_GPU_OVERVIEW_PAGE (wick_gpu_overview_page_get_type ())
G_DECLARE_FINAL_TYPE (WickGpuOverviewPage, wick_gpu_overview_page, WICK, GPU_OVERVIEW_PAGE,
                      WickPage)

GtkWidget *wick_gpu_overview_page_new (WickSelection *selection);

G_END_DECLS
