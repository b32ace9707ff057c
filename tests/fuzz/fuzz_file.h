// What the fuzz targets share: the readers take paths, so each input is written to a file of
// this process first (in /dev/shm when it exists: no disk traffic), with the extension the reader
// dispatches on.
#ifndef DTSIM_FUZZ_FUZZ_FILE_H_
#define DTSIM_FUZZ_FUZZ_FILE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace dtsim::fuzz {

// Writes `data` to this process's input file ending in `extension` (".json", ".xml") and
// returns its path. The file is reused by every input of the process and removed at its end.
inline std::string write_input(const std::uint8_t* data, std::size_t size,
                               const std::string& extension) {
  const std::filesystem::path folder = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
  const std::string path =
      (folder / ("dtsim-fuzz-" + std::to_string(::getpid()) + extension)).string();
  // Removed when the process ends normally (a crash keeps it: it is the finding's input).
  static const struct Remover {
    std::string path;
    ~Remover() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remover{path};
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace dtsim::fuzz

#endif  // DTSIM_FUZZ_FUZZ_FILE_H_
