#include "app/websocket/topic_interest.hpp"

namespace rivet::app {

TopicInterest::Send TopicInterest::report(std::string_view topic, Change change) {
    auto it = topics_.find(topic);
    if (change == Change::First) {
        if (it == topics_.end()) it = topics_.emplace(std::string(topic), Topic{}).first;
        ++it->second.holders;
    } else {
        if (it == topics_.end() || it->second.holders == 0) return Send::Nothing;  // unpaired
        --it->second.holders;
    }
    Channel c = it->second.channel;
    if (c == Channel::Subscribing || c == Channel::Unsubscribing)
        return Send::Nothing;  // settled when its confirmation comes
    return settle(topic);
}

TopicInterest::Send TopicInterest::subscribed(std::string_view topic) {
    auto it = topics_.find(topic);
    if (it == topics_.end() || it->second.channel != Channel::Subscribing) return Send::Nothing;
    it->second.channel = Channel::Subscribed;
    return settle(topic);
}

TopicInterest::Send TopicInterest::unsubscribed(std::string_view topic) {
    auto it = topics_.find(topic);
    if (it == topics_.end() || it->second.channel != Channel::Unsubscribing) return Send::Nothing;
    it->second.channel = Channel::Away;
    return settle(topic);
}

TopicInterest::Send TopicInterest::settle(std::string_view topic) {
    auto it = topics_.find(topic);
    Topic& t = it->second;
    const bool wanted = t.holders > 0;
    if (!wanted && t.channel == Channel::Away) {
        topics_.erase(it);
        return Send::Nothing;
    }
    if (link_ == Link::Down) return Send::Nothing;
    if (wanted && t.channel == Channel::Away) {
        t.channel = Channel::Subscribing;
        return Send::Subscribe;
    }
    if (!wanted && t.channel == Channel::Subscribed) {
        t.channel = Channel::Unsubscribing;
        return Send::Unsubscribe;
    }
    return Send::Nothing;
}

std::vector<std::string> TopicInterest::link_up() {
    link_ = Link::Up;
    std::vector<std::string> to_subscribe;
    for (auto& [name, t] : topics_) {  // after link_lost: every one is wanted and Away
        if (t.holders == 0 || t.channel != Channel::Away) continue;
        t.channel = Channel::Subscribing;
        to_subscribe.push_back(name);
    }
    return to_subscribe;
}

void TopicInterest::link_lost() {
    link_ = Link::Down;
    std::erase_if(topics_, [](const auto& entry) { return entry.second.holders == 0; });
    for (auto& [name, t] : topics_) t.channel = Channel::Away;
}

size_t TopicInterest::holders(std::string_view topic) const {
    auto it = topics_.find(topic);
    return it == topics_.end() ? 0 : it->second.holders;
}

}  // namespace rivet::app
