// bench-simdjson-chrome.cc — the simdjson ondemand baseline for
// bench-model-chrome-load: reads a trace-event JSON file and touches ph, name,
// cat, pid, tid, ts and dur of every element of traceEvents (what an importer
// must read at least). Exit 0 when it saw events.
#include <simdjson.h>

#include <cstdio>
#include <string_view>

int
main (int argc, char **argv)
{
  if (argc < 2)
    return 2;
  simdjson::ondemand::parser parser;
  simdjson::padded_string json;
  if (simdjson::padded_string::load (argv[1]).get (json))
    return 2;
  simdjson::ondemand::document doc;
  if (parser.iterate (json).get (doc))
    return 2;
  size_t n = 0, bytes = 0;
  double sum = 0;
  simdjson::ondemand::array events;
  if (doc["traceEvents"].get_array ().get (events))
    return 2;
  for (auto value : events)
    {
      simdjson::ondemand::object e;
      if (value.get_object ().get (e))
        continue;
      for (auto field : e)
        {
          std::string_view key;
          if (field.unescaped_key ().get (key))
            return 2;
          if (key == "ph" || key == "name" || key == "cat")
            {
              std::string_view s;
              if (!field.value ().get_string ().get (s))
                bytes += s.size ();
            }
          else if (key == "ts" || key == "dur" || key == "pid" || key == "tid")
            {
              double d;
              if (!field.value ().get_double ().get (d))
                sum += d;
            }
        }
      n++;
    }
  std::printf ("%zu events %zu bytes %g\n", n, bytes, sum);
  return n > 0 ? 0 : 1;
}
