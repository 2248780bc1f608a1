#pragma once

// Mutation fuzzing for the parsers' unit tests (run under ASan+UBSan in CI): random edits of
// recorded inputs. Deterministic for a seeded generator, so a failure reproduces.

#include <cstddef>
#include <random>
#include <string>
#include <string_view>

namespace zerodrop::testing {

struct Mutations {
  std::string_view alphabet;  // what a replaced byte becomes
  size_t max_erase = 20;      // an erase removes 1 to this many bytes
  size_t max_copy = 80;       // a copy inserts up to this many bytes of the text elsewhere
};

// `text` after `edits` random edits, each one of: a byte replaced by one of `how.alphabet`, bytes
// erased, a piece of the text copied to another place, an arbitrary byte inserted. Stops early
// if the text becomes empty.
inline std::string mutate(std::string text, int edits, std::mt19937& random, const Mutations& how) {
  for (int e = 0; e < edits && !text.empty(); ++e) {
    size_t at = random() % text.size();
    switch (random() % 4) {
      case 0:
        text[at] = how.alphabet[random() % how.alphabet.size()];
        break;
      case 1:
        text.erase(at, 1 + random() % how.max_erase);
        break;
      case 2:
        text.insert(at, text.substr(random() % text.size(), random() % how.max_copy));
        break;
      default:
        text.insert(at, 1, static_cast<char>(random() % 256));
    }
  }
  return text;
}

}  // namespace zerodrop::testing
