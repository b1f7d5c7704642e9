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

# megamem_imgui_without_default_font(): compiles imgui_draw.cpp from a copy without ImGui's
# built-in ProggyClean font (its 11,980-byte base85 array), for a page that always adds its own
# font before the atlas is built, so that ImFontAtlas::Build never falls back to
# AddFontDefault (web/fonts.cpp). A source whose array or accessor is not where 1.86 has them
# is compiled as it is.
function(megamem_imgui_without_default_font)
  file(READ "${imgui_source_dir}/imgui_draw.cpp" text)
  set(array_start "static const char proggy_clean_ttf_compressed_data_base85[")
  set(accessor "static const char* GetDefaultCompressedFontDataTTFBase85()")
  string(FIND "${text}" "${array_start}" first)
  string(FIND "${text}" "${accessor}" last REVERSE)
  if(first EQUAL -1 OR last LESS_EQUAL first)
    message(STATUS "Dear ImGui: ProggyClean array not found, imgui_draw.cpp compiled as it is")
    return()
  endif()
  string(SUBSTRING "${text}" 0 ${first} before)
  string(SUBSTRING "${text}" ${last} -1 after)
  set(copy "${CMAKE_BINARY_DIR}/imgui_without_default_font/imgui_draw.cpp")
  # Written beside, then copied only when it differs, so a reconfigure rebuilds nothing.
  file(WRITE "${copy}.new"
       "${before}static const char proggy_clean_ttf_compressed_data_base85[1] = \"\";\n\n${after}")
  configure_file("${copy}.new" "${copy}" COPYONLY)
  get_target_property(sources imgui SOURCES)
  list(TRANSFORM sources REPLACE ".*/imgui_draw\\.cpp$" "${copy}")
  set_target_properties(imgui PROPERTIES SOURCES "${sources}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${imgui_source_dir}/imgui_draw.cpp")
endfunction()
