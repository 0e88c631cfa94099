// MIME types and the directory listing's escaping.
#include <gtest/gtest.h>

#include "app/static/directory_listing.hpp"
#include "app/static/mime_types.hpp"

namespace rivet::files {
namespace {

TEST(MimeTypes, BuiltinTable) {
    MimeTypes t;
    EXPECT_EQ(t.lookup("index.html"), "text/html; charset=utf-8");
    EXPECT_EQ(t.lookup("a/b/site.CSS"), "text/css; charset=utf-8");
    EXPECT_EQ(t.lookup("app.js"), "text/javascript; charset=utf-8");
    EXPECT_EQ(t.lookup("mod.mjs"), "text/javascript; charset=utf-8");
    EXPECT_EQ(t.lookup("data.json"), "application/json");
    EXPECT_EQ(t.lookup("logo.svg"), "image/svg+xml; charset=utf-8");
    EXPECT_EQ(t.lookup("p.png"), "image/png");
    EXPECT_EQ(t.lookup("p.jpg"), "image/jpeg");
    EXPECT_EQ(t.lookup("p.jpeg"), "image/jpeg");
    EXPECT_EQ(t.lookup("p.gif"), "image/gif");
    EXPECT_EQ(t.lookup("p.webp"), "image/webp");
    EXPECT_EQ(t.lookup("p.avif"), "image/avif");
    EXPECT_EQ(t.lookup("favicon.ico"), "image/x-icon");
    EXPECT_EQ(t.lookup("f.woff"), "font/woff");
    EXPECT_EQ(t.lookup("f.woff2"), "font/woff2");
    EXPECT_EQ(t.lookup("m.wasm"), "application/wasm");
    EXPECT_EQ(t.lookup("r.txt"), "text/plain; charset=utf-8");
    EXPECT_EQ(t.lookup("d.pdf"), "application/pdf");
    EXPECT_EQ(t.lookup("v.mp4"), "video/mp4");
    EXPECT_EQ(t.lookup("v.webm"), "video/webm");
    EXPECT_EQ(t.lookup("x.xml"), "application/xml; charset=utf-8");
    EXPECT_EQ(t.lookup("t.csv"), "text/csv; charset=utf-8");
    EXPECT_EQ(t.lookup("app.js.map"), "application/json");
}

TEST(MimeTypes, UnknownAndOddNames) {
    MimeTypes t;
    EXPECT_EQ(t.lookup("README"), "application/octet-stream");
    EXPECT_EQ(t.lookup("archive.xyz"), "application/octet-stream");
    EXPECT_EQ(t.lookup(".html"), "application/octet-stream");  // a dot file, not an extension
    EXPECT_EQ(t.lookup("name."), "application/octet-stream");
    EXPECT_EQ(t.lookup("dir.html/file"), "application/octet-stream");
}

TEST(MimeTypes, Overrides) {
    MimeTypes t({{"txt", "text/plain; charset=iso-8859-1"}, {".LOG", "text/plain"}},
                "text/x-unknown");
    EXPECT_EQ(t.lookup("a.txt"), "text/plain; charset=iso-8859-1");
    EXPECT_EQ(t.lookup("server.log"), "text/plain");
    EXPECT_EQ(t.lookup("README"), "text/x-unknown");
    EXPECT_EQ(t.lookup("a.css"), "text/css; charset=utf-8");
}

TEST(DirectoryListing, EscapesHostileNames) {
    std::vector<ListedEntry> entries = {
        {"<script>alert(1)</script>.txt", false, 5, 0},
        {"a\"onmouseover=\"x", false, 1, 0},
        {"javascript:alert(1)", false, 1, 0},
        {"sub dir", true, 0, 0},
        {"caf\xc3\xa9 & co", false, 7, 0},
    };
    std::string page = render_listing("/files/<b>/", entries);
    EXPECT_EQ(page.find("<script>"), std::string::npos);
    EXPECT_EQ(page.find("<b>"), std::string::npos);
    EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;.txt"), std::string::npos);
    EXPECT_NE(page.find("Index of /files/&lt;b&gt;/"), std::string::npos);
    EXPECT_EQ(page.find("\"onmouseover"), std::string::npos);
    EXPECT_NE(page.find("href=\"./javascript%3Aalert%281%29\""), std::string::npos);
    EXPECT_NE(page.find("href=\"./sub%20dir/\""), std::string::npos);
    EXPECT_NE(page.find("href=\"./caf%C3%A9%20%26%20co\""), std::string::npos);
    EXPECT_NE(page.find("caf\xc3\xa9 &amp; co"), std::string::npos);
    // Directories first.
    EXPECT_LT(page.find("sub dir/"), page.find("&lt;script"));
}

TEST(DirectoryListing, HelpersEncode) {
    EXPECT_EQ(html_escape("<a href='x'>&\"</a>"),
              "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    EXPECT_EQ(percent_encode_path("a b/c?d#e%f"), "a%20b/c%3Fd%23e%25f");
    EXPECT_EQ(percent_encode_path("A-z_0.9~"), "A-z_0.9~");
}

}  // namespace
}  // namespace rivet::files
