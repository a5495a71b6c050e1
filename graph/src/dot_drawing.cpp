// The dot drawing's labels.
#include "dot_drawing.hpp"

#include "troupe/graph/analysis.hpp"

namespace troupe::graph::detail {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

std::string label(const node_ptr& n) {
  std::string text = kind_name(n->what());
  if (n->what() == kind::send || n->what() == kind::recv)
    text += (n->what() == kind::send ? " to rank " : " from rank ") + std::to_string(n->ints()[0]) +
            ", tag " + n->name();
  else if (!n->name().empty())
    text += " " + n->name();
  if (n->what() != kind::outputs)
    text += " " + describe(n->shape());
  return text;
}

} // namespace troupe::graph::detail
