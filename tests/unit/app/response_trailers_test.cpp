// Response::trailer / trailers(): validated like header fields plus the names a trailer may not
// carry, shared through the handle a producer keeps, and handed to the engine as the very
// fields the handle fills (view_of, reply_of); none allocated for a response without them.
#include <gtest/gtest.h>

#include <rivet/response.hpp>

#include <stdexcept>

#include "app/server_options.hpp"

using rivet::Response;
using rivet::Trailers;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

TEST(ResponseTrailers, NoneUntilAsked) {
    Response res;
    res.text("hi").header("X-A", "1");
    EXPECT_FALSE(res.has_trailers());
    EXPECT_EQ(rivet::app::view_of(res).trailers, nullptr);
    EXPECT_EQ(rivet::app::reply_of(std::move(res)).trailers, nullptr);
}

TEST(ResponseTrailers, RefusedLikeHeaderFieldsAndForTheFieldsOfTheHead) {
    Response res;
    EXPECT_THROW(res.trailer("", "v"), std::invalid_argument);
    EXPECT_THROW(res.trailer("Bad Name", "v"), std::invalid_argument);
    EXPECT_THROW(res.trailer("X-A", "a\r\nX-B: b"), std::invalid_argument);
    EXPECT_THROW(res.trailer("X-A", std::string("a\0b", 3)), std::invalid_argument);
    for (const char* name : {"Content-Length", "transfer-encoding", "Host", "Trailer", "TE",
                             "Content-Type", "Connection", "Set-Cookie", "Cache-Control"})
        EXPECT_THROW(res.trailer(name, "1"), std::invalid_argument) << name;
    // A refused field leaves the response as it was: no trailers, so not chunked for them.
    EXPECT_FALSE(res.has_trailers());
    Trailers handle = res.trailers();
    EXPECT_THROW(handle.add("Content-Length", "1"), std::invalid_argument);
    EXPECT_THROW(handle.add("grpc-message", "a\nb"), std::invalid_argument);
    EXPECT_TRUE(handle.fields().empty());
}

TEST(ResponseTrailers, AddedInOrderAndNamesMayRepeat) {
    Response res;
    res.trailer("checksum", "abc").trailer("X-Note", "1").trailer("x-note", "2");
    EXPECT_TRUE(res.has_trailers());
    Fields expected = {{"checksum", "abc"}, {"X-Note", "1"}, {"x-note", "2"}};
    EXPECT_EQ(res.trailers().fields(), expected);
    EXPECT_EQ(res.trailers().get("X-NOTE"), "1");
    EXPECT_EQ(res.trailers().get("absent"), "");
}

TEST(ResponseTrailers, TheHandleFillsTheFieldsTheEngineReadsAtTheEnd) {
    Response res;
    Trailers kept = res.trailers();  // as a producer keeps it
    res.stream([](std::string&) { return false; }, "text/plain");
    rivet::engine::ReplyView view = rivet::app::view_of(res);
    ASSERT_NE(view.trailers, nullptr);
    EXPECT_TRUE(view.trailers->fields.empty());
    kept.add("grpc-status", "0");  // the body's end: after the head was made
    Fields expected = {{"grpc-status", "0"}};
    EXPECT_EQ(view.trailers->fields, expected);
    // An owned Reply (a deferred answer) and its copies share them too.
    rivet::engine::Reply owned = rivet::app::reply_of(std::move(res));
    EXPECT_EQ(owned.trailers, view.trailers);
    EXPECT_EQ(rivet::engine::Reply::copy_of(view).trailers, view.trailers);
    EXPECT_EQ(owned.view().trailers, view.trailers);
}

TEST(ResponseTrailers, ADefaultHandleNamesNoResponse) {
    Trailers none;
    EXPECT_FALSE(none);
    EXPECT_TRUE(none.fields().empty());
    EXPECT_EQ(none.get("x"), "");
    EXPECT_THROW(none.add("checksum", "1"), std::logic_error);
}

}  // namespace
