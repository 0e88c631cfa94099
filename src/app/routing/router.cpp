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
#include <cstring>
#include <deque>
#include <utility>

#include "app/routing/route_constraint.hpp"
#include "app/routing/route_pattern.hpp"

namespace rivet::app {

using route_pattern::Token;

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

// A plain loop: the runs are a few bytes, and calling memcmp for them cost more than the walk.
bool same_bytes(const char* a, const char* b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

uint64_t load8(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
uint32_t load4(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
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

// The whole paths of parameterless patterns, each with its route end: open addressing, linear
// probing, a power-of-two table at most half full. A later pattern may split the edge an earlier
// one ended on, and split() moves the route end (its leaf) to a new child node: after an add()
// that split an edge, every path is looked up in the tree again (so registering n patterns that
// each split an edge costs n^2 lookups; thousands of routes take milliseconds).
struct Router::ExactPaths {
    struct Slot {
        std::string_view path;      // into `paths`
        const Node* end = nullptr;  // null: an empty slot
    };
    std::deque<std::string> paths;  // every parameterless pattern, once; a deque keeps them put
    std::vector<Slot> slots = std::vector<Slot>(8);
    size_t mask = 7;
    size_t longest = 0;    // of the paths
    bool complete = true;  // every path is in the table (forget() empties it)

    // A word at a time (a path of up to 8 bytes is one step), every byte taken in: the words,
    // then the last 8 bytes, which overlap the words when the size is not a multiple of 8.
    static uint64_t hash(std::string_view s) {
        const char* p = s.data();
        const size_t n = s.size();
        uint64_t h = n * 0x9e3779b97f4a7c15ull;
        const auto mix = [&h](uint64_t word) { h = (h ^ word) * 0xff51afd7ed558ccdull; };
        if (n >= 8) {
            for (size_t i = 0; i + 8 < n; i += 8) mix(load8(p + i));
            mix(load8(p + n - 8));
        } else if (n >= 4) {
            mix(load4(p) | uint64_t(load4(p + n - 4)) << 32);
        } else if (n > 0) {
            mix(uint8_t(p[0]) | uint8_t(p[n / 2]) << 8 | uint32_t(uint8_t(p[n - 1])) << 16);
        }
        // A product's low bits depend only on its factors' low bits: fold the high half down,
        // spread it up again, and fold once more (MurmurHash3's finisher), so that the bits the
        // mask keeps depend on every byte.
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ull;
        return h ^ (h >> 33);
    }

    // Equal sizes assumed; compared the way hash() reads them.
    static bool same(const char* a, const char* b, size_t n) {
        if (n >= 8) {
            for (size_t i = 0; i + 8 < n; i += 8)
                if (load8(a + i) != load8(b + i)) return false;
            return load8(a + n - 8) == load8(b + n - 8);
        }
        if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
        return same_bytes(a, b, n);
    }

    const Slot* slot_of(std::string_view p) const {
        for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
            const Slot& slot = slots[i];
            if (!slot.end) return nullptr;
            if (slot.path.size() == p.size() && same(slot.path.data(), p.data(), p.size()))
                return &slot;
        }
    }

    const Node* find(std::string_view p) const {
        if (p.size() > longest) return nullptr;  // most paths of files and parameters
        const Slot* slot = slot_of(p);
        return slot ? slot->end : nullptr;
    }

    // Before add() splits an edge: the route end of some path may move to a new node, so the
    // table is emptied (lookups fall back to the walk) until relink(), which an exception in
    // the add may skip without leaving a stale node behind.
    void forget() {
        std::fill(slots.begin(), slots.end(), Slot{});
        complete = false;
    }

    // After `pattern` (parameterless) was added to the tree under `root`.
    void added(std::string_view pattern, const Node& root) {
        if (complete) {
            if (slot_of(pattern)) return;  // a second method on a path it has
            paths.emplace_back(pattern);
        } else if (std::find(paths.begin(), paths.end(), pattern) == paths.end()) {
            paths.emplace_back(pattern);
        }
        longest = std::max(longest, pattern.size());
        if (!complete || 2 * paths.size() > slots.size())
            relink(root);
        else
            insert(paths.back(), root);
    }

    // Every path looked up in the tree again, into a table at most half full.
    void relink(const Node& root) {
        complete = false;
        size_t size = slots.size();
        while (size < 2 * paths.size()) size *= 2;
        slots.assign(size, Slot{});
        mask = size - 1;
        for (const std::string& p : paths) insert(p, root);
        complete = true;
    }

    void insert(std::string_view p, const Node& root) {
        size_t i = hash(p) & mask;
        while (slots[i].end) i = (i + 1) & mask;
        slots[i] = {p, static_end(root, p)};
    }

    // The node that static edges alone lead to from `root` along all of `p`, a registered
    // parameterless pattern (so the edges are there).
    static const Node* static_end(const Node& root, std::string_view p) {
        const Node* n = &root;
        for (size_t off = 0; off < p.size(); off += n->prefix.size()) n = n->static_child(p[off]);
        return n;
    }
};

Router::Router() : root_(std::make_unique<Node>()), exact_(std::make_unique<ExactPaths>()) {}
Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

void Router::add(Method method, std::string_view pattern, RouteId route) {
    const auto m = static_cast<size_t>(method);
    if (m >= kMethods) throw std::invalid_argument("rivet::Router: invalid method");
    if (route == kNoRoute) throw std::invalid_argument("rivet::Router: route id reserved");
    // Compiles the constraints; may throw, with the router untouched.
    std::vector<Token> tokens = route_pattern::tokenize(pattern, RouteParams::kMax);
    if (!root_) root_ = std::make_unique<Node>();
    if (!exact_) exact_ = std::make_unique<ExactPaths>();

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
            if (common < child->prefix.size()) {
                exact_->forget();
                child->split(common);
            }
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
    if (tokens.size() == 1 && tokens[0].kind == Token::Static)
        exact_->added(pattern, *root_);
    else if (!exact_->complete)  // a pattern with parameters may split an edge too
        exact_->relink(*root_);
}

namespace {

// The methods a route end answers, HEAD included where GET will serve it.
MethodSet answered(MethodSet s) {
    if (s & method_bit(Method::Get)) s |= method_bit(Method::Head);
    return s;
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
    if (const Node* end = exact_->find(path)) {
        // What the walk would find first, when this route end has the method (or GET for HEAD).
        auto m = static_cast<size_t>(method);
        if (end->leaf->routes[m] == kNoRoute && method == Method::Head)
            m = static_cast<size_t>(Method::Get);
        if (end->leaf->routes[m] != kNoRoute) {
            out.kind = Match::Found;
            out.route = end->leaf->routes[m];
            out.allowed = answered(end->methods);
            return;
        }
    }
    Search s{path, method, out};
    if (s.walk(*root_, 0, 0)) return;
    if (s.seen) {  // a failed walk set no parameter count (end_at does, on success only)
        out.kind = Match::MethodNotAllowed;
        out.allowed = s.seen;
    }
}

}  // namespace rivet::app
