#include "app/websocket/topics.hpp"

#include "app/websocket/websocket_core.hpp"

namespace rivet::app {

Topics::Topics(unsigned loops, Post post, TopicInterest::Report report)
    : loops_(loops), post_(std::move(post)), report_(std::move(report)) {
    for (unsigned i = 0; i < loops; ++i) inboxes_.push_back(std::make_unique<Inbox>());
}

void Topics::subscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws) {
    auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    if (it == by_topic.end()) {
        it = by_topic.emplace(std::string(topic), Subscribers{}).first;
        if (report_) report_(topic, TopicInterest::Change::First);
    }
    it->second.insert(ws);
}

void Topics::unsubscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws) {
    auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    if (it == by_topic.end()) return;
    it->second.erase(ws);
    if (!it->second.empty()) return;
    by_topic.erase(it);  // a topic without subscribers costs nothing
    if (report_) report_(topic, TopicInterest::Change::Last);
}

size_t Topics::subscribers(unsigned loop, std::string_view topic) const {
    const auto& by_topic = loops_.at(loop);
    auto it = by_topic.find(topic);
    return it == by_topic.end() ? 0 : it->second.size();
}

void Topics::publish(std::string_view topic,
                     std::shared_ptr<const engine::PreparedMessage> message) {
    for (unsigned i = 0; i < loops_.size(); ++i) {
        Inbox& inbox = *inboxes_[i];
        bool first;
        {
            std::lock_guard lock(inbox.mutex);
            first = inbox.messages.empty();
            inbox.messages.emplace_back(topic, message);
        }
        if (first) post_(i, [this, i] { deliver(i); });  // later ones ride on this task
    }
}

void Topics::deliver(unsigned loop) {
    std::vector<std::pair<std::string, Message>> messages;
    {
        std::lock_guard lock(inboxes_[loop]->mutex);
        messages.swap(inboxes_[loop]->messages);
    }
    auto& by_topic = loops_[loop];
    std::vector<detail::WebSocketCore*> batched;  // subscribers holding output to write
    std::vector<detail::WebSocketCore*> targets;
    for (auto& [topic, message] : messages) {
        auto it = by_topic.find(topic);
        if (it == by_topic.end()) continue;
        // A send may close a subscriber (too slow), which unsubscribes it: walk a copy.
        targets.assign(it->second.begin(), it->second.end());
        for (auto* ws : targets) {
            if (!ws->session) continue;
            if (!ws->batched) {
                ws->batched = true;
                ws->session->begin_batch();
                batched.push_back(ws);
            }
            ws->session->send(*message);
        }
    }
    for (auto* ws : batched) {
        ws->batched = false;
        if (ws->session) ws->session->end_batch();
    }
}

}  // namespace rivet::app
