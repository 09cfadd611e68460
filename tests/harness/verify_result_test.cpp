#include "verify_result.h"

#include <gtest/gtest.h>

using namespace egg::harness;

TEST(VerifyResult, StatusNamesRoundTrip) {
  for (auto s : {VerifyStatus::verified, VerifyStatus::mismatch, VerifyStatus::nan_output,
                 VerifyStatus::timeout, VerifyStatus::side_stream, VerifyStatus::harness_error,
                 VerifyStatus::forbidden_source, VerifyStatus::too_large})
    EXPECT_EQ(status_from_name(status_name(s)), s);
  EXPECT_TRUE(is_candidate_failure(VerifyStatus::too_large));  // the stage moves on
  EXPECT_FALSE(status_from_name("bogus"));
  EXPECT_TRUE(is_candidate_failure(VerifyStatus::crash));
  EXPECT_FALSE(is_candidate_failure(VerifyStatus::no_gpu));
}

TEST(VerifyResult, JsonRoundTrip) {
  VerifyResult r;
  r.status = VerifyStatus::mismatch;
  r.message = "set 1: bad";
  r.max_abs_error = 0.5;
  r.first_bad_index = 17;
  r.atol = 1e-4;
  r.gpu = {"NVIDIA H200", "9.0", "13.0", "13.0"};
  Timing t;
  t.event_ms = {1.0, 0.9, 1.2};
  t.trials = 100;
  t.method = "held stream";
  t.hold_timeouts = 2;
  t.cut_short = true;
  t.kernels = {{"cutlass::Kernel2<sgemm>", 0.75}, {"conv_epilogue", 0.25}};
  r.timing = t;
  const VerifyResult back = result_from_json(to_json(r));
  EXPECT_EQ(back.status, VerifyStatus::mismatch);
  EXPECT_EQ(back.message, r.message);
  EXPECT_EQ(back.first_bad_index, 17);
  EXPECT_EQ(back.gpu.name, "NVIDIA H200");
  ASSERT_TRUE(back.timing);
  EXPECT_DOUBLE_EQ(back.timing->event_ms.p90, 1.2);
  EXPECT_EQ(back.timing->trials, 100);
  ASSERT_EQ(back.timing->kernels.size(), 2u);
  EXPECT_EQ(back.timing->kernels[1].name, "conv_epilogue");
  EXPECT_DOUBLE_EQ(back.timing->kernels[0].median_ms, 0.75);
  EXPECT_EQ(back.timing->method, "held stream");
  EXPECT_EQ(back.timing->hold_timeouts, 2);
  EXPECT_TRUE(back.timing->cut_short);
  EXPECT_THROW(result_from_json(nlohmann::json{{"status", "bogus"}}), nlohmann::json::exception);
  EXPECT_FALSE(back.accuracy);
}

TEST(VerifyResult, TheAccuracyRecordRoundTrips) {
  VerifyResult r;
  r.status = VerifyStatus::verified;
  AccuracyRecord a;
  a.mode = "auto";
  a.output = "out0";
  a.judged = 5;
  a.torch_max_abs_error = 0.024;
  a.kernel_max_abs_error = 0.019;
  a.torch_mean_abs_error = 1e-3;
  a.kernel_mean_abs_error = 8e-4;
  r.accuracy = a;
  r.float64_unavailable = "forward fails in float64: dtype mismatch";
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["accuracy"]["judged"], 5);
  const VerifyResult back = result_from_json(j);
  ASSERT_TRUE(back.accuracy);
  EXPECT_EQ(back.accuracy->mode, "auto");
  EXPECT_EQ(back.accuracy->output, "out0");
  EXPECT_EQ(back.accuracy->judged, 5);
  EXPECT_TRUE(back.accuracy->passed);
  EXPECT_DOUBLE_EQ(back.accuracy->factor, 2.0);
  EXPECT_DOUBLE_EQ(back.accuracy->torch_max_abs_error, 0.024);
  EXPECT_DOUBLE_EQ(back.accuracy->kernel_mean_abs_error, 8e-4);
  EXPECT_EQ(back.float64_unavailable, r.float64_unavailable);
}

// A count or index that is no integer of its field's range (a huge number a candidate's process
// could write, which nlohmann would convert with undefined behaviour) is a type error naming the
// field, as every malformed field is; an integer in range still reads.
TEST(VerifyResult, AnIntegerFieldOutOfRangeIsATypeError) {
  nlohmann::json j = {{"status", "mismatch"}, {"bad_count", 7.7e51}};
  try {
    (void)result_from_json(j);
    FAIL() << "no error";
  } catch (const nlohmann::json::type_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_count"), std::string::npos) << e.what();
  }
  j["bad_count"] = 1.5;
  EXPECT_THROW((void)result_from_json(j), nlohmann::json::type_error);
  j["bad_count"] = std::int64_t{1} << 40;
  j["exit_code"] = std::int64_t{1} << 40;  // past int
  EXPECT_THROW((void)result_from_json(j), nlohmann::json::type_error);
  j["exit_code"] = 3;
  const VerifyResult r = result_from_json(j);
  EXPECT_EQ(r.bad_count, std::int64_t{1} << 40);
  EXPECT_EQ(r.exit_code, 3);
}
