#pragma once
// zerodrop copy-self: puts this binary into another container's image at run time. An init
// container from an image holding the static zerodrop (which has no cp and no shell) copies it
// into a shared emptyDir, where the app container's preStop runs `zerodrop sleep`.

#include <filesystem>

namespace zerodrop::shim {

// The name of the copy inside the folder: preStop runs `<mount>/zerodrop sleep N`.
inline constexpr const char* kCopyName = "zerodrop";

// Copies the running executable to `dir`/zerodrop atomically (a temporary file in `dir`, fsync,
// mode 0755, rename over any older copy) and returns the copy's path. Throws Error naming the
// path that failed; a failed copy leaves nothing behind.
std::filesystem::path copy_self(const std::filesystem::path& dir);

}  // namespace zerodrop::shim
