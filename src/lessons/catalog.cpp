// The suite's lessons, in reading order.
#include "engine/lesson.hpp"
#include "lessons/linear_rnn.hpp"

namespace vl {

std::vector<Lesson> all_lessons() {
  std::vector<Lesson> lessons;
  lessons.push_back(lessons::linear_rnn::lesson());
  return lessons;
}

}  // namespace vl
