# Dear ImGui for the web app: target `imgui` = core + GLFW platform backend. The renderer is
# megamem's own (web/ui_renderer.cpp, WebGL2), not ImGui's OpenGL3 backend.
#
# Sources come from IMGUI_DIR (scripts/setup.sh unpacks Debian's source package, 1.86, into
# the git-ignored third_party/imgui) or, when that is missing, from upstream's matching tag via
# FetchContent. No ImGui source is ever committed.
set(MEGAMEM_IMGUI_TAG v1.86 CACHE STRING "Dear ImGui release fetched when IMGUI_DIR is not set")
set(IMGUI_DIR "" CACHE PATH "Dear ImGui source folder (holds imgui.cpp)")
if(NOT IMGUI_DIR AND EXISTS "${PROJECT_SOURCE_DIR}/third_party/imgui/imgui.cpp")
  set(IMGUI_DIR "${PROJECT_SOURCE_DIR}/third_party/imgui" CACHE PATH "" FORCE)
endif()

if(IMGUI_DIR)
  if(NOT EXISTS "${IMGUI_DIR}/imgui.cpp")
    message(FATAL_ERROR "IMGUI_DIR=${IMGUI_DIR} has no imgui.cpp (run scripts/setup.sh)")
  endif()
  set(imgui_source_dir "${IMGUI_DIR}")
else()
  include(FetchContent)
  FetchContent_Declare(imgui GIT_REPOSITORY https://github.com/ocornut/imgui.git
                             GIT_TAG ${MEGAMEM_IMGUI_TAG} GIT_SHALLOW TRUE)
  FetchContent_MakeAvailable(imgui)
  set(imgui_source_dir "${imgui_SOURCE_DIR}")
endif()
message(STATUS "Dear ImGui from ${imgui_source_dir}")

add_library(imgui STATIC
  ${imgui_source_dir}/imgui.cpp
  ${imgui_source_dir}/imgui_draw.cpp
  ${imgui_source_dir}/imgui_tables.cpp
  ${imgui_source_dir}/imgui_widgets.cpp
  ${imgui_source_dir}/backends/imgui_impl_glfw.cpp
)
# SYSTEM: third-party code, so our -Werror never judges its headers.
target_include_directories(imgui SYSTEM PUBLIC ${imgui_source_dir} ${imgui_source_dir}/backends)
target_compile_definitions(imgui PUBLIC IMGUI_DISABLE_OBSOLETE_FUNCTIONS)
if(EMSCRIPTEN)
  # GLFW emulated by Emscripten's JS library over the canvas (its header is in the sysroot,
  # so -sUSE_GLFW=3 is a link setting only); WebGL2 only.
  target_link_options(imgui PUBLIC -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
  # No imgui.ini and no font files on the web: without file functions the page needs no
  # Emscripten file system (-sFILESYSTEM=0, about 60 KB less JavaScript).
  target_compile_definitions(imgui PUBLIC IMGUI_DISABLE_FILE_FUNCTIONS)
endif()
