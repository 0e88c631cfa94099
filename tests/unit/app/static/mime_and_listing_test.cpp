// MIME types and the directory listing's escaping.
#include <rivet/html.hpp>

#include <gtest/gtest.h>

#include "app/static/directory_listing.hpp"
#include "app/static/listing_page.hpp"
#include "app/static/mime_types.hpp"
#include "temp_dir.hpp"

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

TEST(MimeTypes, LongTypesOfTheTableAreInternedAndNoOthers) {
    MimeTypes t;
    for (const char* file : {"a.html", "a.css", "a.js", "a.json", "a.txt", "a.svg", "a.md",
                             "a.webmanifest", "README"}) {
        std::string_view found = t.lookup(file);
        const std::string copy(found);  // a run-time string, as a handler's would be
        std::string_view literal = interned_content_type(copy);
        EXPECT_EQ(literal, found) << file;
        EXPECT_NE(literal.data(), copy.data()) << file;
        EXPECT_EQ(interned_content_type(std::string(found)).data(), literal.data()) << file;
    }
    EXPECT_EQ(interned_content_type("application/octet-stream"), kDefaultContentType);
    // Short types (a string holds them without allocating), near misses and unknown ones.
    for (const char* other :
         {"", "image/png", "font/woff", "text/html; charset=utf-", "text/html; charset=utf-88",
          "Text/html; charset=utf-8", "application/vnd.example+json", "application/jsoN"})
        EXPECT_EQ(interned_content_type(other), "") << other;
}

// The whole page for `entries`, as ListingPage writes it.
std::string render_listing(std::string_view url_path, std::vector<ListedEntry> entries) {
    sort_listing(entries);
    std::string page;
    append_listing_head(page, url_path);
    for (const auto& e : entries) append_listing_row(page, e);
    append_listing_end(page, 0);
    return page;
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
    EXPECT_EQ(rivet::html_escape("<a href='x'>&\"</a>"),
              "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    EXPECT_EQ(percent_encode_path("a b/c?d#e%f"), "a%20b/c%3Fd%23e%25f");
    EXPECT_EQ(percent_encode_path("A-z_0.9~"), "A-z_0.9~");
}

TEST(DirectoryListing, BytesThatAreNotUtf8ShowAsReplacementCharacters) {
    auto shown = [](std::string_view name) {
        std::string out;
        append_html_text(out, name);
        return out;
    };
    const std::string bad = "\xEF\xBF\xBD";                           // U+FFFD
    EXPECT_EQ(shown("caf\xc3\xa9 <b>"), "caf\xc3\xa9 &lt;b&gt;");     // UTF-8 kept
    EXPECT_EQ(shown("bad\xff\xfe.txt"), "bad" + bad + bad + ".txt");  // Latin-1 bytes
    EXPECT_EQ(shown("cut\xc3"), "cut" + bad);                         // a cut code point
    EXPECT_EQ(shown("\xe2\x82<x"), bad + "&lt;x");                    // cut, then markup
    EXPECT_EQ(shown("\xed\xa0\x80"), bad + bad + bad);                // a surrogate
    EXPECT_EQ(shown("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");         // 4 bytes, fine
    // The link keeps the exact bytes, so it leads to the file.
    EXPECT_EQ(percent_encode_path("bad\xff"), "bad%FF");
}

// Steps a page to its end: the pieces written and how many reads of the directory yielded.
struct SteppedPage {
    std::string text;
    size_t yields = 0;
    size_t largest_piece = 0;
};

SteppedPage step_through(const testing::TempDir& dir, size_t max_entries) {
    auto reader = std::make_unique<DirectoryReader>(dir.path(), "", false);
    EXPECT_EQ(reader->status(), 0);
    ListingPage page("/d/", std::move(reader), max_entries);
    SteppedPage out;
    for (int calls = 0; calls < 100000; ++calls) {
        std::string piece;
        ListingPage::Step step = page.next(piece);
        out.largest_piece = std::max(out.largest_piece, piece.size());
        out.text += piece;
        if (step == ListingPage::Step::Yield) ++out.yields;
        if (step == ListingPage::Step::Done) return out;
    }
    ADD_FAILURE() << "the page never ended";
    return out;
}

size_t rows(const std::string& page) {
    size_t n = 0;
    for (size_t at = page.find("<tr>"); at != std::string::npos; at = page.find("<tr>", at + 1))
        ++n;
    return n - 1;  // the "../" row
}

TEST(ListingPage, CutsPastItsBoundAndSaysSo) {
    testing::TempDir dir;
    for (int i = 0; i < 6; ++i) dir.write(std::string("f").append(std::to_string(i)), "x");
    dir.write(".hidden", "x");  // never listed, never counted
    SteppedPage whole = step_through(dir, 6);
    EXPECT_EQ(rows(whole.text), 6u);
    EXPECT_EQ(whole.text.find("cut at"), std::string::npos);
    EXPECT_NE(whole.text.find("</html>"), std::string::npos);
    SteppedPage cut = step_through(dir, 5);
    EXPECT_EQ(rows(cut.text), 5u);
    EXPECT_NE(cut.text.find("Listing cut at 5 entries"), std::string::npos) << cut.text;
    EXPECT_NE(cut.text.find("</html>"), std::string::npos);
    EXPECT_EQ(rows(step_through(dir, 0).text), 1u);  // 0 reads as 1: a page is never empty
}

TEST(ListingPage, ReadsInBatchesAndWritesInSlices) {
    testing::TempDir dir;
    const size_t files = 3 * ListingPage::kNamesPerBatch;
    for (size_t i = 0; i < files; ++i)
        dir.write(std::string(120, 'n') + std::to_string(i), "x");  // long rows: many slices
    SteppedPage page = step_through(dir, 10000);
    EXPECT_EQ(rows(page.text), files);
    EXPECT_GE(page.yields, 3u);  // the loop served others between the batches
    EXPECT_LT(page.largest_piece, ListingPage::kSliceBytes + 1024);
    // Sorted: the names as numbers are not, as text they are.
    EXPECT_LT(page.text.find(std::string(120, 'n') + "10\""),
              page.text.find(std::string(120, 'n') + "9\""));
}

}  // namespace
}  // namespace rivet::files
