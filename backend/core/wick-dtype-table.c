/* wick-dtype-table.c — the trace format's dtype sizes (wick-dtype-table.h). */
#include "config.h"

#include "core/wick-dtype-table.h"

#include <string.h>
#include <strings.h>

size_t
wick_dtype_table_size (const char *name, size_t length)
{
  static const struct
  {
    const char *name;
    size_t size;
  } sizes[] = {
    { "u8", 1 },  { "i8", 1 },  { "bool", 1 }, { "f8", 1 },  { "u16", 2 },
    { "i16", 2 }, { "f16", 2 }, { "bf16", 2 }, { "u32", 4 }, { "i32", 4 },
    { "f32", 4 }, { "u64", 8 }, { "i64", 8 },  { "f64", 8 },
  };
  if (name == NULL)
    return 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (strlen (sizes[i].name) == length && strncasecmp (sizes[i].name, name, length) == 0)
      return sizes[i].size;
  return 0;
}
