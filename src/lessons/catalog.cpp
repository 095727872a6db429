// The suite's lessons, in reading order.
#include "engine/lesson.hpp"
#include "lessons/attention/attention.hpp"
#include "lessons/linear_family/linear_family.hpp"
#include "lessons/encoder_decoder/encoder_decoder.hpp"
#include "lessons/linear_rnn/linear_rnn.hpp"
#include "lessons/masking/masking.hpp"
#include "lessons/positions/positions.hpp"

namespace vl {

std::vector<Lesson> all_lessons() {
  std::vector<Lesson> lessons;
  lessons.push_back(lessons::attention::lesson());
  lessons.push_back(lessons::masking::lesson());
  lessons.push_back(lessons::positions::lesson());
  lessons.push_back(lessons::linear_rnn::lesson());
  lessons.push_back(lessons::linear_family::lesson());
  lessons.push_back(lessons::encoder_decoder::lesson());
  return lessons;
}

}  // namespace vl
