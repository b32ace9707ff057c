// What the CLI tests share: a fresh temporary directory per test, and running the dtsim binary
// with its stdout and stderr captured there.
#ifndef DTSIM_TESTS_CLI_CLI_SUPPORT_H_
#define DTSIM_TESTS_CLI_CLI_SUPPORT_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <sys/wait.h>

namespace dtsim::cli_test {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A test with its own directory dir_ (<tmp>/dtsim_<suite>_<test>, removed afterwards).
class DtsimTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("dtsim_" + std::string(info->test_suite_name()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `dtsim ARGS` (DTSIM_BINARY) from the current directory.
  [[nodiscard]] Result run(const std::string& args) const {
    const std::string cmd = std::string(DTSIM_BINARY) + " " + args + " >" +
                            (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  }

  fs::path dir_;
};

}  // namespace dtsim::cli_test

#endif  // DTSIM_TESTS_CLI_CLI_SUPPORT_H_
