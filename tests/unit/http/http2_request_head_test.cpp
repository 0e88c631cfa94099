// HTTP/2's side of a request head (http/http2/request_head.hpp): the preface matched whole, in
// part or not at all, and a decoded header list turned into the RequestHead every protocol
// shares (cookies joined, :authority standing for Host, the query split off, Content-Length
// read, the header list's size counted as RFC 9113 §6.5.2 says).
#include "http/http2/request_head.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rivet::http::http2 {
namespace {

TEST(Http2Preface, MatchesWholePartialOrNot) {
    EXPECT_EQ(match_preface(kPreface), PrefaceMatch::Full);
    EXPECT_EQ(match_preface(std::string(kPreface) + "\x00\x00\x12\x04"), PrefaceMatch::Full);
    EXPECT_EQ(match_preface(""), PrefaceMatch::Partial);  // nothing yet: it may still come
    for (size_t n = 1; n < kPreface.size(); ++n)
        EXPECT_EQ(match_preface(kPreface.substr(0, n)), PrefaceMatch::Partial) << n;
    EXPECT_EQ(match_preface("POST / HTTP/1.1\r\n"), PrefaceMatch::No);
    EXPECT_EQ(match_preface("PRI * HTTP/1.1\r\n"), PrefaceMatch::No);
    EXPECT_EQ(match_preface("PRI * HTTP/2.0\r\n\r\nSM\r\n\r!"), PrefaceMatch::No);  // last byte
    EXPECT_EQ(match_preface("G"), PrefaceMatch::No);
    EXPECT_EQ(match_preface("P"), PrefaceMatch::Partial);
}

TEST(Http2Preface, ConnectionSpecificFieldsAreKnownInAnyCase) {
    for (const char* name :
         {"Connection", "keep-alive", "PROXY-CONNECTION", "Transfer-Encoding", "upgrade"})
        EXPECT_TRUE(connection_specific(name)) << name;
    for (const char* name : {"te", "content-length", "host", "connections", ""})
        EXPECT_FALSE(connection_specific(name)) << name;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// A builder fed `list` in order, and the head it finishes.
struct Built {
    RequestHeadBuilder builder;
    RequestHead head;
    std::vector<Header> fields;
    int status = -1;

    Built(const Fields& list, bool body_follows = false) {
        for (const auto& [n, v] : list) builder.add(n, v);
        status = builder.finish(head, fields, body_follows);
    }
    std::vector<std::pair<std::string, std::string>> field_list() const {
        std::vector<std::pair<std::string, std::string>> out;
        for (const Header& h : fields) out.emplace_back(h.name, h.value);
        return out;
    }
};

Fields get(std::string path, Fields extra = {}) {
    Fields f{{":method", "GET"},
             {":scheme", "https"},
             {":authority", "example.com:8443"},
             {":path", std::move(path)}};
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
}

TEST(Http2RequestHead, PseudoFieldsMakeTheRequestLine) {
    Built b(get("/a/b?x=1&y=2", {{"accept", "*/*"}}));
    ASSERT_EQ(b.status, 0);
    EXPECT_EQ(b.head.method, Method::Get);
    EXPECT_EQ(b.head.method_name, "GET");
    EXPECT_EQ(b.head.target, "/a/b?x=1&y=2");
    EXPECT_EQ(b.head.path, "/a/b");
    EXPECT_EQ(b.head.query, "x=1&y=2");
    EXPECT_EQ(b.head.authority, "example.com:8443");
    EXPECT_EQ(b.head.version_major, 2);
    EXPECT_EQ(b.head.version_minor, 0);
    EXPECT_TRUE(b.head.keep_alive);
    EXPECT_FALSE(b.head.expect_continue);
    EXPECT_EQ(b.head.framing, BodyFraming::None);
    // Pseudo-fields are not fields; :authority stands for Host (after the others).
    EXPECT_EQ(b.field_list(), (Fields{{"accept", "*/*"}, {"host", "example.com:8443"}}));
    EXPECT_EQ(b.head.headers.size(), 2u);
}

TEST(Http2RequestHead, QueryAndPathWithoutAQuestionMark) {
    Built plain(get("/only"));
    EXPECT_EQ(plain.head.path, "/only");
    EXPECT_EQ(plain.head.query, "");
    Built empty_query(get("/p?"));
    EXPECT_EQ(empty_query.head.path, "/p");
    EXPECT_EQ(empty_query.head.query, "");
    Built two(get("/p?a=?b"));
    EXPECT_EQ(two.head.path, "/p");
    EXPECT_EQ(two.head.query, "a=?b");  // split at the first '?'
}

TEST(Http2RequestHead, AHostFieldIsKeptAndNoSecondIsAdded) {
    Built b(get("/", {{"host", "other.example"}}));
    ASSERT_EQ(b.status, 0);
    EXPECT_EQ(b.field_list(), (Fields{{"host", "other.example"}}));
    EXPECT_EQ(b.head.authority, "example.com:8443");  // :authority wins (RFC 9113 §8.3.1)
    Built no_authority({{":method", "GET"}, {":path", "/"}, {"host", "h.example"}});
    EXPECT_EQ(no_authority.head.authority, "h.example");
    Built neither({{":method", "OPTIONS"}, {":path", "*"}});
    EXPECT_EQ(neither.head.authority, "");
    EXPECT_TRUE(neither.field_list().empty());
}

TEST(Http2RequestHead, CookiesSplitForHpackAreJoinedInOrder) {
    Built b(get("/", {{"cookie", "a=1"}, {"accept", "x"}, {"cookie", "b=2"}, {"cookie", "c=3"}}));
    ASSERT_EQ(b.status, 0);
    EXPECT_EQ(b.field_list(),
              (Fields{{"cookie", "a=1; b=2; c=3"}, {"accept", "x"}, {"host", "example.com:8443"}}));
    Built one(get("/", {{"cookie", "only=1"}}));
    EXPECT_EQ(one.field_list(), (Fields{{"cookie", "only=1"}, {"host", "example.com:8443"}}));
}

TEST(Http2RequestHead, TheViewsStayValidAfterTheCookiesAreJoined) {
    // Enough fields that the join appends past the storage's first capacity.
    Fields extra;
    for (int i = 0; i < 40; ++i)
        extra.emplace_back("cookie", std::string("k").append(std::to_string(i)).append("=v"));
    extra.emplace_back("x-last", std::string(300, 'l'));
    Built b(get("/long?q=1", extra));
    ASSERT_EQ(b.status, 0);
    EXPECT_EQ(b.head.path, "/long");
    EXPECT_EQ(b.head.query, "q=1");
    EXPECT_EQ(b.head.method_name, "GET");
    auto list = b.field_list();
    ASSERT_EQ(list.size(), 3u);
    EXPECT_TRUE(list[0].second.starts_with("k0=v; k1=v; "));
    EXPECT_TRUE(list[0].second.ends_with("; k39=v"));
    EXPECT_EQ(list[1], (std::pair<std::string, std::string>{"x-last", std::string(300, 'l')}));
    // The views are into the builder's storage.
    const std::string_view storage = b.builder.storage();
    for (const Header& h : b.fields) {
        EXPECT_GE(h.value.data(), storage.data());
        EXPECT_LE(h.value.data() + h.value.size(), storage.data() + storage.size());
    }
}

TEST(Http2RequestHead, ContentLengthIsParsedAndAMissingOneMeansUntilTheEnd) {
    Built post({{":method", "POST"}, {":path", "/up"}, {"content-length", "1234"}}, true);
    ASSERT_EQ(post.status, 0);
    EXPECT_EQ(post.head.method, Method::Post);
    EXPECT_EQ(post.head.framing, BodyFraming::ContentLength);
    EXPECT_EQ(post.head.content_length, 1234u);
    Built open({{":method", "POST"}, {":path", "/up"}}, true);
    EXPECT_EQ(open.status, 0);
    EXPECT_EQ(open.head.framing, BodyFraming::Chunked);  // "a body of unknown length"
    Built none({{":method", "POST"}, {":path", "/up"}}, false);
    EXPECT_EQ(none.head.framing, BodyFraming::None);
    Built zero({{":method", "POST"}, {":path", "/up"}, {"content-length", "0"}}, false);
    EXPECT_EQ(zero.status, 0);
    EXPECT_EQ(zero.head.framing, BodyFraming::ContentLength);
    EXPECT_EQ(zero.head.content_length, 0u);
}

TEST(Http2RequestHead, ABadOrImpossibleContentLengthIs400) {
    for (const char* bad : {"12a", "-1", " 12", "1,1", "99999999999999999999999"}) {
        Built b({{":method", "POST"}, {":path", "/"}, {"content-length", bad}}, true);
        EXPECT_EQ(b.status, 400) << "'" << bad << "'";
    }
    // A length promised on a HEADERS frame that ends the stream: no body can come.
    Built promised({{":method", "POST"}, {":path", "/"}, {"content-length", "5"}}, false);
    EXPECT_EQ(promised.status, 400);
}

TEST(Http2RequestHead, TheListSizeCountsNameValueAnd32PerField) {
    RequestHeadBuilder b;
    EXPECT_EQ(b.list_size(), 0u);
    b.add(":method", "GET");  // 7 + 3 + 32
    EXPECT_EQ(b.list_size(), 42u);
    b.add("x", "");  // 1 + 0 + 32
    EXPECT_EQ(b.list_size(), 75u);
    b.add("cookie", "a=1");
    b.add("cookie", "b=2");  // counted as sent, before any join
    EXPECT_EQ(b.list_size(), 75u + 2 * (6 + 3 + 32));
}

TEST(Http2RequestHead, MethodsAreRecognized) {
    for (auto [name, method] :
         std::vector<std::pair<std::string, Method>>{{"HEAD", Method::Head},
                                                     {"PUT", Method::Put},
                                                     {"PATCH", Method::Patch},
                                                     {"BREW", Method::Other}}) {
        Built b({{":method", name}, {":path", "/"}});
        EXPECT_EQ(b.head.method, method) << name;
        EXPECT_EQ(b.head.method_name, name);
    }
}

}  // namespace
}  // namespace rivet::http::http2
