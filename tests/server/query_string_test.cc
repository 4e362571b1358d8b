// The request target's query string, decoded as Go's url.ParseQuery decodes it.
#include "server/query_string.h"

#include <gtest/gtest.h>

namespace draplane::server {
namespace {

TEST(QueryString, SplitsAndDecodes) {
  std::string path;
  std::map<std::string, std::string> q;
  split_target("/api/v1/pods?labelSelector=app%3Dweb%2Ctier+in+(a)&watch=1&flag&=x&limit=5&limit=7", path, q);
  EXPECT_EQ(path, "/api/v1/pods");
  EXPECT_EQ(q.at("labelSelector"), "app=web,tier in (a)");
  EXPECT_EQ(q.at("watch"), "1");
  EXPECT_EQ(q.at("flag"), "");
  EXPECT_EQ(q.count(""), 0u);
  EXPECT_EQ(q.at("limit"), "5");  // the first value counts, as the options conversions take values[0]
}

TEST(QueryString, MalformedEscapesDropThePair) {
  // Once a thrown std::invalid_argument (std::stoi) that ended the connection.
  std::string path;
  std::map<std::string, std::string> q;
  split_target("/api/v1/pods?a=%zz&b=%4&c=%&d=ok&%g1=e", path, q);
  EXPECT_EQ(q, (std::map<std::string, std::string>{{"d", "ok"}}));
  std::string out;
  EXPECT_FALSE(url_decode("%", out));
  EXPECT_TRUE(url_decode("%41%62+c", out));
  EXPECT_EQ(out, "Ab c");
}

}  // namespace
}  // namespace draplane::server
