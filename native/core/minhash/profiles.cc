#include "minhash/profiles.h"

#include <string>

#include "hash/fast64.h"
#include "minhash/mt19937.h"

namespace neardup {
namespace minhash {

const char* ProfileName(Profile p) {
  switch (p) {
    case Profile::kFast: return "fast";
    case Profile::kDoubriV1: return "doubri-v1";
    case Profile::kDatasketch: return "datasketch";
  }
  return "?";
}

Config DefaultConfig(Profile p) {
  Config c;
  c.profile = p;
  c.text = TextOptions();  // char 5-grams, no normalisation
  switch (p) {
    case Profile::kFast:
      c.num_perm = 128;
      c.seed = 0;
      break;
    case Profile::kDoubriV1:
      c.num_perm = 800;
      c.seed = 0;
      break;
    case Profile::kDatasketch:
      c.text.unit = TextUnit::kWord;
      c.text.lowercase = true;
      c.num_perm = 128;
      c.seed = 1;
      break;
  }
  return c;
}

Status ValidateConfig(const Config& c) {
  if (c.profile != Profile::kFast && c.profile != Profile::kDoubriV1 && c.profile != Profile::kDatasketch)
    return Status(Code::kInvalidArgument, "unknown MinHash profile");
  Status s = ValidateTextOptions(c.text);
  if (!s.ok()) return s;
  const uint32_t max = c.profile == Profile::kFast ? kMaxFastPerm : kMaxPerm;
  if (c.num_perm < 1 || c.num_perm > max)
    return Status(Code::kInvalidArgument, std::string("numPerm must be an integer from 1 to ") + std::to_string(max) +
                                              " for the " + ProfileName(c.profile) + " profile");
  if (c.profile == Profile::kDatasketch && c.seed > 0xFFFFFFFFull)
    return Status(Code::kInvalidArgument, "the datasketch profile's seed must be from 0 to 2^32-1 (numpy RandomState)");
  if (c.profile == Profile::kDoubriV1 && c.seed + c.num_perm - 1 > 0xFFFFFFFFull)
    return Status(Code::kInvalidArgument, "the doubri-v1 profile's seeds (seed .. seed+numPerm-1) must fit 32 bits");
  return Status::Ok();
}

Status Plan::Create(const Config& c, std::shared_ptr<const Plan>* out) {
  Status s = ValidateConfig(c);
  if (!s.ok()) return s;
  auto p = std::make_shared<Plan>();
  p->c_ = c;
  if (c.profile == Profile::kDatasketch) {
    p->a_.resize(c.num_perm);
    p->b_.resize(c.num_perm);
    DatasketchPermutations(static_cast<uint32_t>(c.seed), c.num_perm, p->a_.data(), p->b_.data());
  } else if (c.profile == Profile::kFast) {
    p->fast_seed_ = fast64::PrepareSeed(c.seed);
    p->probe_seed_ = fast64::Mix64(c.seed ^ 0x6a09e667f3bcc908ull);
  }
  *out = std::move(p);
  return Status::Ok();
}

}  // namespace minhash
}  // namespace neardup
