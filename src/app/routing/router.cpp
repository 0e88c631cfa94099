// Router: radix tree over path bytes, with constrained parameter, plain parameter and wildcard
// children at segment starts.
//
// Static edges are compressed byte strings (they may span several segments, "/api/v1/"), so a
// lookup is a few short byte compares. Each node is entered at exactly one path offset (a static
// edge consumes fixed bytes, a parameter, constrained or not, exactly one segment), so backtracking
// visits every node at most once: lookups are linear in the tree part the path touches, never
// exponential. A constraint is tested once per sibling branch it heads, on one segment.
#include "app/routing/router.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "app/routing/route_constraint.hpp"

namespace rivet::app {

namespace {

constexpr size_t kMethods = static_cast<size_t>(Method::Other) + 1;
constexpr RouteId kNoRoute = ~RouteId{0};

// Our own table: http::method_name lives in the parser's translation unit, and error messages
// should not make the router depend on it.
const char* method_label(Method m) {
    static constexpr const char* kNames[kMethods] = {
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "OTHER"};
    return kNames[static_cast<size_t>(m)];
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

[[noreturn]] void bad_pattern(std::string_view pattern, const char* why) {
    throw std::invalid_argument("rivet::Router: malformed route pattern \"" + std::string(pattern) +
                                "\": " + why);
}

// One piece of a parsed pattern: a static byte run, a parameter, or the final wildcard.
struct Token {
    enum Kind : uint8_t { Static, Param, Wildcard } kind;
    std::string_view text;  // the bytes for Static, the name for Param and Wildcard
    std::unique_ptr<RouteConstraint> constraint = nullptr;  // a constrained Param's
};

// A parameter or wildcard that opens at p[i] (':' or '*'); returns where its segment ends.
size_t parameter(std::string_view p, size_t i, std::vector<Token>& out) {
    const bool wild = p[i] == '*';
    size_t j = i + 1;
    while (j < p.size() && is_name_char(p[j])) ++j;
    std::string_view name = p.substr(i + 1, j - i - 1);
    if (name.empty()) bad_pattern(p, "empty parameter name");
    for (const Token& t : out)
        if (t.kind != Token::Static && t.text == name) bad_pattern(p, "parameter name used twice");
    std::unique_ptr<RouteConstraint> constraint;
    if (j < p.size() && (p[j] == '<' || p[j] == '(')) {
        if (wild) bad_pattern(p, "a wildcard takes no constraint");
        try {
            const size_t end = RouteConstraint::end_of(p, j);
            constraint = std::make_unique<RouteConstraint>(p.substr(j, end - j));
            j = end;
        } catch (const std::invalid_argument& e) {
            bad_pattern(p, e.what());
        }
    }
    if (wild && j != p.size()) bad_pattern(p, "wildcard must be the last segment");
    if (j < p.size() && p[j] != '/')
        bad_pattern(p,
                    "a parameter is a whole segment: a name of [A-Za-z0-9_], then optionally "
                    "<type> or (expression)");
    out.push_back({wild ? Token::Wildcard : Token::Param, name, std::move(constraint)});
    return j;
}

// Splits and validates the whole pattern before the tree is touched, so a rejected pattern
// leaves the router unchanged.
std::vector<Token> tokenize(std::string_view p) {
    if (p.empty() || p[0] != '/') bad_pattern(p, "must start with '/'");
    for (char c : p) {  // expressions may hold a space, '?' or '#'; static runs are checked below
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) bad_pattern(p, "contains a control byte");
    }
    std::vector<Token> out;
    size_t names = 0;
    size_t i = 0;
    while (i < p.size()) {
        const bool seg_start = i > 0 && p[i - 1] == '/';
        if (seg_start && (p[i] == ':' || p[i] == '*')) {
            if (++names > RouteParams::kMax) bad_pattern(p, "too many parameters");
            i = parameter(p, i, out);
            continue;
        }
        // A static run stops just before the next ':' or '*' that opens a segment.
        size_t j = i + 1;
        while (j < p.size() && !(p[j - 1] == '/' && (p[j] == ':' || p[j] == '*'))) ++j;
        std::string_view run = p.substr(i, j - i);
        if (run.find_first_of(" ?#") != std::string_view::npos)
            bad_pattern(p, "contains a space, '?' or '#'");
        out.push_back({Token::Static, run});
        i = j;
    }
    return out;
}

}  // namespace

struct Router::Node {
    // Per-method data, allocated only on nodes where a route ends.
    struct Leaf {
        std::array<RouteId, kMethods> routes;
        std::array<std::vector<std::string>, kMethods> names;  // param names, in path order
        Leaf() { routes.fill(kNoRoute); }
    };

    std::string prefix;  // bytes a static node consumes; empty for root, param and wildcard nodes
    std::string first_bytes;  // first byte of each static child, parallel to `statics`
    std::vector<std::unique_ptr<Node>> statics;
    // Constrained ':' children, one per distinct constraint, in the order they are tried
    // (RouteConstraint::Kind, then registration).
    struct Constrained {
        std::unique_ptr<RouteConstraint> check;
        std::unique_ptr<Node> node;
    };
    std::vector<Constrained> constrained;
    std::unique_ptr<Node> param;  // ':' child: one non-empty segment
    // Which parameter children exist (Constrained: some, and maybe `param`), so that a lookup
    // tests one byte per node for them, as before constraints existed.
    enum class Segments : uint8_t { None, Plain, Constrained } segments = Segments::None;
    std::unique_ptr<Node> wildcard;  // '*' child: the rest of the path; always a leaf
    MethodSet methods = 0;
    std::unique_ptr<Leaf> leaf;

    // A plain loop, as in walk()'s prefix test: the runs are a few bytes, and calling memchr
    // and memcmp for them was 2.7% of a pipelined /hello, more than the walk itself.
    Node* static_child(char c) const {
        for (size_t i = 0; i < first_bytes.size(); ++i)
            if (first_bytes[i] == c) return statics[i].get();
        return nullptr;
    }

    // Splits this node's edge at `at`: the tail and everything below move to a new child.
    void split(size_t at) {
        auto tail = std::make_unique<Node>();
        tail->prefix = prefix.substr(at);
        tail->first_bytes = std::move(first_bytes);
        tail->statics = std::move(statics);
        tail->constrained = std::move(constrained);
        tail->param = std::move(param);
        tail->segments = std::exchange(segments, Segments::None);
        tail->wildcard = std::move(wildcard);
        tail->methods = std::exchange(methods, 0);
        tail->leaf = std::move(leaf);
        prefix.resize(at);
        first_bytes.assign(1, tail->prefix[0]);
        statics.clear();
        constrained.clear();
        statics.push_back(std::move(tail));
    }

    // The child for a parameter with this constraint, made on first use.
    Node* constrained_child(std::unique_ptr<RouteConstraint> check) {
        for (Constrained& c : constrained)
            if (c.check->spec() == check->spec()) return c.node.get();
        segments = Segments::Constrained;
        auto after = std::upper_bound(
            constrained.begin(), constrained.end(), check->kind(),
            [](RouteConstraint::Kind k, const Constrained& c) { return k < c.check->kind(); });
        return constrained.insert(after, {std::move(check), std::make_unique<Node>()})->node.get();
    }
};

Router::Router() : root_(std::make_unique<Node>()) {}
Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

void Router::add(Method method, std::string_view pattern, RouteId route) {
    const auto m = static_cast<size_t>(method);
    if (m >= kMethods) throw std::invalid_argument("rivet::Router: invalid method");
    if (route == kNoRoute) throw std::invalid_argument("rivet::Router: route id reserved");
    std::vector<Token> tokens = tokenize(pattern);  // compiles the constraints, may throw
    if (!root_) root_ = std::make_unique<Node>();

    Node* n = root_.get();
    std::vector<std::string> names;
    for (Token& t : tokens) {
        if (t.constraint) {
            n = n->constrained_child(std::move(t.constraint));
            names.emplace_back(t.text);
            continue;
        }
        if (t.kind == Token::Param || t.kind == Token::Wildcard) {
            auto& slot = t.kind == Token::Param ? n->param : n->wildcard;
            if (!slot) slot = std::make_unique<Node>();
            if (t.kind == Token::Param && n->segments == Node::Segments::None)
                n->segments = Node::Segments::Plain;
            n = slot.get();
            names.emplace_back(t.text);
            continue;
        }
        std::string_view rest = t.text;
        while (!rest.empty()) {
            Node* child = n->static_child(rest[0]);
            if (!child) {
                auto fresh = std::make_unique<Node>();
                fresh->prefix = std::string(rest);
                n->first_bytes.push_back(rest[0]);
                n->statics.push_back(std::move(fresh));
                n = n->statics.back().get();
                break;
            }
            size_t common = 0;
            const size_t limit = std::min(rest.size(), child->prefix.size());
            while (common < limit && rest[common] == child->prefix[common]) ++common;
            if (common < child->prefix.size()) child->split(common);
            n = child;
            rest.remove_prefix(common);
        }
    }

    if (!n->leaf) n->leaf = std::make_unique<Node::Leaf>();
    if (n->leaf->routes[m] != kNoRoute)
        throw std::invalid_argument("rivet::Router: duplicate route " +
                                    std::string(method_label(method)) + " " + std::string(pattern));
    n->leaf->routes[m] = route;
    n->leaf->names[m] = std::move(names);
    n->methods |= method_bit(method);
}

namespace {

// The methods a route end answers, HEAD included where GET will serve it.
MethodSet answered(MethodSet s) {
    if (s & method_bit(Method::Get)) s |= method_bit(Method::Head);
    return s;
}

bool same_bytes(const char* a, const char* b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

}  // namespace

// State of one lookup; lives on find's stack, so nothing is allocated.
struct Router::Search {
    std::string_view path;
    Method method;
    Match& out;
    MethodSet seen = 0;  // union of methods of every route end the path reached

    // A route end reached with `depth` parameters filled in out.params.values.
    bool end_at(const Node& n, size_t depth) {
        if (!n.methods) return false;
        seen |= answered(n.methods);
        auto m = static_cast<size_t>(method);
        if (n.leaf->routes[m] == kNoRoute) {
            if (method != Method::Head) return false;
            m = static_cast<size_t>(Method::Get);
            if (n.leaf->routes[m] == kNoRoute) return false;
        }
        out.kind = Match::Found;
        out.route = n.leaf->routes[m];
        out.allowed = answered(n.methods);
        const auto& names = n.leaf->names[m];
        for (size_t i = 0; i < names.size(); ++i) out.params.names[i] = names[i];
        out.params.size = depth;
        return true;
    }

    // `n` has consumed the path up to `off`; tries static, then constrained parameters, then the
    // plain parameter, then wildcard.
    bool walk(const Node& n, size_t off, size_t depth) {
        if (off == path.size() && end_at(n, depth)) return true;
        if (off < path.size()) {
            if (const Node* c = n.static_child(path[off])) {
                const size_t len = c->prefix.size();
                if (path.size() - off >= len &&
                    same_bytes(path.data() + off, c->prefix.data(), len) &&
                    walk(*c, off + len, depth))
                    return true;
            }
            if (n.segments != Node::Segments::None && path[off] != '/') {
                if (n.segments == Node::Segments::Constrained) {
                    if (parameters(n, off, depth)) return true;
                } else {
                    size_t end = path.find('/', off);
                    if (end == std::string_view::npos) end = path.size();
                    out.params.values[depth] = path.substr(off, end - off);
                    if (walk(*n.param, end, depth + 1)) return true;
                }
            }
        }
        if (n.wildcard) {
            out.params.values[depth] = path.substr(off);
            if (end_at(*n.wildcard, depth + 1)) return true;
        }
        return false;
    }

    // The constrained children of `n`, then its plain parameter, on the segment at `off`. Out
    // of line, so that walk() on trees without constraints stays as lean as before.
    [[gnu::noinline]] bool parameters(const Node& n, size_t off, size_t depth) {
        size_t end = path.find('/', off);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view segment = path.substr(off, end - off);
        out.params.values[depth] = segment;  // deeper levels write only past `depth`
        for (const Node::Constrained& c : n.constrained)
            if (c.check->matches(segment) && walk(*c.node, end, depth + 1)) return true;
        return n.param && walk(*n.param, end, depth + 1);
    }
};

Router::Match Router::find(Method method, std::string_view path) const {
    Match out;
    find(method, path, out);
    return out;
}

void Router::find(Method method, std::string_view path, Match& out) const {
    out.kind = Match::NotFound;
    out.route = 0;
    out.allowed = 0;
    out.params.size = 0;
    if (!root_ || static_cast<size_t>(method) >= kMethods) return;
    Search s{path, method, out};
    if (s.walk(*root_, 0, 0)) return;
    if (s.seen) {  // a failed walk set no parameter count (end_at does, on success only)
        out.kind = Match::MethodNotAllowed;
        out.allowed = s.seen;
    }
}

}  // namespace rivet::app
