// A new database's file, made ahead of time: the bytes of an empty trialdb database at each page
// size a new file may take, made at build time by Database itself (make_new_file_images.cc) and
// compiled into the binary (new_file_images.h), so that an ingest into a new file copies them
// instead of running the schema.
//
// Why: creating the schema runs schema.sql's DDL and fills bucket_octave (~30 M instructions,
// about 8 ms here), then commits it through the WAL: most of the fixed cost of ingesting a small
// trial into a new file (bench/README.md, "A new database from an image").
//
// The image is the file Database(kCreate) leaves once closed: in WAL mode, as every opening
// leaves it (a copy is made only where no WAL, journal or shared memory is, so it never takes
// another file's for its own), and with one placeholder where its database_identity.uid goes:
// each copy gets a random uid of its own there, as schema.sql gives a file it creates.
//
//   if (const NewFileImage* image = find_new_file_image(page_size)) create_from_image(path, *image);
//   Database db(path, OpenMode::kCreate, ...);  // the copy, or a new file as before
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace trialdb {

struct NewFileImage {
  int page_size = 0;
  const unsigned char* compressed = nullptr;  // the file's bytes, a zstd frame
  size_t compressed_bytes = 0;
  size_t bytes = 0;       // the file's size
  size_t uid_offset = 0;  // where the kUidPlaceholder bytes are in the file
};

// What the image holds where database_identity.uid goes: as long as a uid (32 lowercase hex
// digits) and not one, so that it is found once and only there.
inline constexpr char kUidPlaceholder[] = "trialdb-new-file-image-uid-here!";
inline constexpr size_t kUidChars = sizeof(kUidPlaceholder) - 1;
static_assert(kUidChars == 32);

// The image of a new database made by Database(kCreate) at page_size in scratch_dir (which it
// leaves as it found it): NewFileImage's fields. zstd rather than zlib: the files are mostly
// zeros, which zstd restores about ten times faster. Throws Error when it cannot.
struct MadeImage {
  std::string compressed;
  size_t bytes = 0;
  size_t uid_offset = 0;
};
MadeImage make_new_file_image(int page_size, const std::string& scratch_dir);

// Creates the database file `path` as a copy of image with a new random uid, only if nothing is
// at `path` (not even a dangling link) nor at its -wal, -journal or -shm: the file appears whole
// (an unnamed file of the folder, linked to its name if the name is still free) or not at all.
// False when it did not create it (the caller opens `path` as before, and SQLite creates it or
// says why it cannot).
bool create_from_image(const std::string& path, const NewFileImage& image);

}  // namespace trialdb
