// A new database from this build's image (schema/new_file_image.h): at every page size the copy
// holds what Database(kCreate) makes of a new file (the same schema, rows, settings and pages),
// with a random uid of its own, and nothing else left in the folder; and create_from_image never
// replaces or hides anything that is there already: a file (even an empty one), a link, a WAL,
// journal or shared-memory file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/new_file_images.h"
#include "schema/page_size_policy.h"
#include "tests/common/file_bytes.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

std::vector<int> page_sizes() {
  std::vector<int> sizes;
  for (int size = page_size_limits().smallest; size <= page_size_limits().largest; size *= 2) sizes.push_back(size);
  return sizes;
}

std::string uid_of(const Database& db) {
  Statement q(db.handle(), "SELECT uid FROM database_identity");
  return q.step() ? q.text(0) : "";
}

// Everything a database holds that its creation decides: settings, the schema, every table's rows
// (the uid left out: each file has its own).
std::map<std::string, std::string> contents(const Database& db) {
  std::map<std::string, std::string> out;
  for (const char* pragma : {"page_size", "page_count", "freelist_count", "auto_vacuum", "application_id",
                             "user_version", "journal_mode", "encoding"}) {
    Statement q(db.handle(), std::string("PRAGMA ") + pragma);
    out[pragma] = q.step() ? q.text(0) : "";
  }
  std::vector<std::string> tables;
  {
    Statement q(db.handle(), "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name");
    while (q.step()) {
      out["schema " + q.text(1)] = q.text(0) + " " + q.text(2) + " " + (q.is_null(3) ? "" : q.text(3));
      if (q.text(0) == "table") tables.push_back(q.text(1));
    }
  }
  for (const std::string& table : tables) {
    if (table == "database_identity") continue;
    Statement q(db.handle(), "SELECT * FROM \"" + table + "\"");
    std::string rows;
    while (q.step()) {
      for (int c = 0; c < sqlite3_column_count(q.handle()); ++c) {
        const char* text = reinterpret_cast<const char*>(sqlite3_column_text(q.handle(), c));
        rows += std::to_string(sqlite3_column_type(q.handle(), c)) + ":" + (text ? text : "") + "|";
      }
      rows += "\n";
    }
    out["rows " + table] = rows;
  }
  return out;
}

bool is_uid(const std::string& s) { return std::regex_match(s, std::regex("[0-9a-f]{32}")); }

const NewFileImage& image_of(int page_size) {
  const NewFileImage* image = find_new_file_image(page_size);
  EXPECT_NE(image, nullptr) << page_size;
  return *image;
}

}  // namespace

TEST(NewFileImage, EveryPageSizeHasOne) {
  for (int size : page_sizes()) EXPECT_NE(find_new_file_image(size), nullptr) << size;
  EXPECT_EQ(find_new_file_image(page_size_limits().largest * 2), nullptr);
}

TEST(NewFileImage, ACopyHoldsWhatTheSchemaMakesOfANewFile) {
  TempDir tmp;
  for (int size : page_sizes()) {
    SCOPED_TRACE(size);
    const std::string made = tmp / ("made-" + std::to_string(size) + ".db");
    const std::string copied = tmp / ("copied-" + std::to_string(size) + ".db");
    ASSERT_TRUE(create_from_image(copied, image_of(size)));
    Database by_schema(made, OpenMode::kCreate, nullptr, {}, size);
    Database by_image(copied, OpenMode::kCreate, nullptr, {}, size);
    EXPECT_EQ(contents(by_image), contents(by_schema));
    EXPECT_EQ(contents(by_image)["page_size"], std::to_string(size));
    EXPECT_TRUE(is_uid(uid_of(by_image))) << uid_of(by_image);
    Statement check(by_image.handle(), "PRAGMA integrity_check");
    ASSERT_TRUE(check.step());
    EXPECT_EQ(check.text(0), "ok");
  }
}

TEST(NewFileImage, EachCopyHasAUidOfItsOwn) {
  TempDir tmp;
  ASSERT_TRUE(create_from_image(tmp / "a.db", image_of(kPageSize)));
  ASSERT_TRUE(create_from_image(tmp / "b.db", image_of(kPageSize)));
  const std::string a = uid_of(Database(tmp / "a.db")), b = uid_of(Database(tmp / "b.db"));
  EXPECT_TRUE(is_uid(a)) << a;
  EXPECT_TRUE(is_uid(b)) << b;
  EXPECT_NE(a, b);
  EXPECT_EQ(test::file_bytes(tmp / "a.db").find(kUidPlaceholder), std::string::npos);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(tmp.path)) ++files;
  EXPECT_EQ(files, 2u);  // a.db and b.db, nothing written on the way
}

TEST(NewFileImage, NeverReplacesOrHidesWhatIsThere) {
  TempDir tmp;
  const NewFileImage& image = image_of(kPageSize);
  auto write = [](const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  };

  const std::string empty = tmp / "empty.db";  // an empty file is SQLite's to make a database of
  write(empty, "");
  EXPECT_FALSE(create_from_image(empty, image));
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  const std::string other = tmp / "other.db";
  write(other, "not a database");
  EXPECT_FALSE(create_from_image(other, image));
  EXPECT_EQ(test::file_bytes(other), "not a database");

  const std::string link = tmp / "link.db";  // a dangling link: SQLite refuses to follow it
  std::filesystem::create_symlink(tmp / "nowhere.db", link);
  EXPECT_FALSE(create_from_image(link, image));
  EXPECT_FALSE(std::filesystem::exists(tmp / "nowhere.db"));

  for (const char* suffix : {"-wal", "-journal", "-shm"}) {  // they belong to a file that was there
    const std::string path = tmp / (std::string("left") + suffix + ".db");
    write(path + suffix, "left behind");
    EXPECT_FALSE(create_from_image(path, image)) << suffix;
    EXPECT_FALSE(std::filesystem::exists(path)) << suffix;
    EXPECT_EQ(test::file_bytes(path + suffix), "left behind");
  }

  EXPECT_FALSE(create_from_image(tmp / "no-such-folder/a.db", image));
}

TEST(NewFileImage, ACopyIsMadeWithTheModeSQLiteGivesANewFile) {
  TempDir tmp;
  { Database by_schema(tmp / "made.db"); }
  ASSERT_TRUE(create_from_image(tmp / "copied.db", image_of(kPageSize)));
  struct stat made, copied;
  ASSERT_EQ(stat((tmp / "made.db").c_str(), &made), 0);
  ASSERT_EQ(stat((tmp / "copied.db").c_str(), &copied), 0);
  EXPECT_EQ(copied.st_mode & 07777, made.st_mode & 07777);
}
