#include "app/websocket/topics.hpp"

#include "app/websocket/websocket_core.hpp"

namespace rivet::app {

Topics::Topics(unsigned loops, Post post) : loops_(loops), post_(std::move(post)) {}

void Topics::subscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws) {
    auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    if (it == by_topic.end()) it = by_topic.emplace(std::string(topic), Subscribers{}).first;
    it->second.insert(ws);
}

void Topics::unsubscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws) {
    auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    if (it == by_topic.end()) return;
    it->second.erase(ws);
    if (it->second.empty()) by_topic.erase(it);  // a topic without subscribers costs nothing
}

size_t Topics::subscribers(unsigned loop, std::string_view topic) const {
    const auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    return it == by_topic.end() ? 0 : it->second.size();
}

void Topics::publish(std::string_view topic,
                     std::shared_ptr<const engine::PreparedMessage> message) {
    auto name = std::make_shared<const std::string>(topic);
    for (unsigned i = 0; i < loops_.size(); ++i)
        post_(i, [this, i, name, message] { deliver(i, *name, *message); });
}

void Topics::deliver(unsigned loop, const std::string& topic,
                     const engine::PreparedMessage& message) {
    auto& by_topic = loops_[loop];
    auto it = by_topic.find(topic);
    if (it == by_topic.end()) return;
    // A send may close a subscriber (too slow), which unsubscribes it: walk a copy.
    std::vector<detail::WebSocketCore*> targets(it->second.begin(), it->second.end());
    for (auto* ws : targets)
        if (ws->session) ws->session->send(message);
}

}  // namespace rivet::app
