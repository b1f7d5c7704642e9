// Browser downloads (platform.hpp download_file): the bytes become a Blob behind a temporary
// link that is clicked once, as a "Save as" of a file would be.
#include <emscripten.h>

#include <string>

#include "platform.hpp"

namespace {

// clang-format off
EM_JS(void, js_download_file, (const char* name, const char* bytes, double size,
                               const char* mime_type), {
  var data = HEAPU8.slice(bytes, bytes + size);
  var blob = new Blob([data], {type: UTF8ToString(mime_type)});
  var url = URL.createObjectURL(blob);
  var link = document.createElement("a");
  link.href = url;
  link.download = UTF8ToString(name);
  link.style.display = "none";
  document.body.appendChild(link);
  link.click();
  document.body.removeChild(link);
  setTimeout(function() { URL.revokeObjectURL(url); }, 60000);
});
// clang-format on

}  // namespace

namespace megamem::web {

void download_file(const std::string& file_name, const std::string& bytes,
                   const std::string& mime_type) {
  js_download_file(file_name.c_str(), bytes.data(), static_cast<double>(bytes.size()),
                   mime_type.c_str());
}

}  // namespace megamem::web
