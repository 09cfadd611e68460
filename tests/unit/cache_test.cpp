#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "cache/key.h"
#include "cache/key_lock.h"
#include "cache/store.h"
#include "util/error.h"
#include "util/files.h"
#include "util/sha256.h"

namespace egg::cache {
namespace {

TEST(Sha256, KnownDigest) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Key, FieldsAreLengthPrefixed) {
  KeyBuilder a, b;
  a.add("f", "ab");
  a.add("g", "c");
  b.add("f", "a");
  b.add("g", "bc");
  EXPECT_NE(a.key(), b.key());
  EXPECT_EQ(a.key().size(), 64u);
}

TEST(Key, SameFieldsSameKeyAndOrderMatters) {
  KeyBuilder a, b, c;
  for (auto* k : {&a, &b}) {
    k->add("spec", "{}");
    k->add("arches", "sm_90;");
  }
  c.add("arches", "sm_90;");
  c.add("spec", "{}");
  EXPECT_EQ(a.key(), b.key());
  EXPECT_NE(a.key(), c.key());
}

TEST(Key, ChangedFieldsNamesWhatDiffers) {
  KeyBuilder a, b;
  a.add("spec", "1");
  a.add("nvcc", "12.0");
  b.add("spec", "1");
  b.add("nvcc", "13.0");
  auto changed = changed_fields(a.describe(), b.describe());
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], "nvcc");
}

// The previous manifest's cache_fields may hold anything (found by fuzz_manifest): a malformed
// one names every field as changed instead of throwing (which ended egg-gen with exit 2).
TEST(Key, ChangedFieldsAgainstAMalformedManifestDoesNotThrow) {
  KeyBuilder now;
  now.add("spec", "1");
  now.add("nvcc", "13.0");
  for (const char* before :
       {R"([1, 2])", R"("spec")", R"({"spec": 5})", R"({"spec": {"sha256": 5}})",
        R"({"spec": {"sha256": null}, "old": []})"}) {
    std::vector<std::string> changed;
    EXPECT_NO_THROW(changed = changed_fields(nlohmann::json::parse(before), now.describe()))
        << before;
    EXPECT_NE(std::find(changed.begin(), changed.end(), "spec"), changed.end()) << before;
  }
}

class StoreTest : public ::testing::Test {
 protected:
  TempDir dir{std::filesystem::temp_directory_path(), "egg-store-test"};
  LocalStore store{dir.path()};
  std::string key = sha256_hex("k");
};

TEST_F(StoreTest, MissThenHit) {
  EXPECT_EQ(store.lookup(key).status, LookupStatus::miss);
  store.store(key, nlohmann::json{{"spec", {{"sha256", "x"}}}},
              {{"kernel.cu", "code"}, {"header.h", "h"}});
  auto hit = store.lookup(key);
  ASSERT_EQ(hit.status, LookupStatus::hit);
  EXPECT_EQ(hit.files.at("kernel.cu"), "code");
  EXPECT_EQ(store.stats().entries, 1u);
  EXPECT_TRUE(store.fields(key).has_value());
}

TEST_F(StoreTest, TamperedEntryIsCorruptAndRemoved) {
  store.store(key, nlohmann::json::object(), {{"kernel.cu", "code"}});
  auto entry = dir.path() / "v1" / key.substr(0, 2) / key;
  write_atomic(entry / "kernel.cu", "evil");
  EXPECT_EQ(store.lookup(key).status, LookupStatus::corrupt);
  EXPECT_FALSE(std::filesystem::exists(entry));
  EXPECT_EQ(store.lookup(key).status, LookupStatus::miss);
}

TEST_F(StoreTest, PartialEntryWithoutManifestIsCorrupt) {
  auto entry = dir.path() / "v1" / key.substr(0, 2) / key;
  write_atomic(entry / "kernel.cu", "half");
  EXPECT_EQ(store.lookup(key).status, LookupStatus::corrupt);
}

TEST_F(StoreTest, GarbageEntryJsonIsCorrupt) {
  auto entry = dir.path() / "v1" / key.substr(0, 2) / key;
  write_atomic(entry / "entry.json", "{not json");
  EXPECT_EQ(store.lookup(key).status, LookupStatus::corrupt);
}

TEST_F(StoreTest, ClearRemovesEverything) {
  store.store(key, nlohmann::json::object(), {{"a", "1"}});
  store.store(sha256_hex("other"), nlohmann::json::object(), {{"a", "2"}});
  EXPECT_EQ(store.clear(), 2u);
  EXPECT_EQ(store.stats().entries, 0u);
}

// A second holder of one key waits (told who holds it) until the first lets go; another key does
// not wait at all.
TEST_F(StoreTest, AKeysLockMakesASecondGenerationWaitForTheFirst) {
  auto first = std::make_unique<KeyLock>(dir.path(), key);
  ASSERT_TRUE(first->held()) << first->error();
  EXPECT_FALSE(first->waited());
  {
    KeyLock other(dir.path(), sha256_hex("other"));
    EXPECT_TRUE(other.held());
    EXPECT_FALSE(other.waited());
  }
  std::atomic<long> told{-1};
  std::atomic<bool> second_held{false};
  std::thread second([&] {
    KeyLock lock(dir.path(), key, [&](long pid) { told = pid; });
    second_held = lock.held() && lock.waited();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_held);  // still waiting
  first.reset();
  second.join();
  EXPECT_TRUE(second_held);
  EXPECT_EQ(told.load(), static_cast<long>(::getpid()));
}

TEST_F(StoreTest, AKeysLockThatCannotBeCreatedIsNotHeldAndSaysWhy) {
  write_atomic(dir.path() / "locks", "a file where the folder would be");
  KeyLock lock(dir.path(), key);
  EXPECT_FALSE(lock.held());
  EXPECT_NE(lock.error().find("locks"), std::string::npos) << lock.error();
}

TEST_F(StoreTest, BadKeyIsAUserError) { EXPECT_THROW(store.lookup("../../etc"), UserError); }

}  // namespace
}  // namespace egg::cache
