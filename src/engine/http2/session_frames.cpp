// Http2Session, the frames: nghttp2's callbacks, which turn frames into stream events, and the
// guards against frames that cost the server work and give the client nothing.
#include <nghttp2/nghttp2.h>

#include "engine/http2/allocator.hpp"
#include "engine/http2/session.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

namespace {

Http2Session& session_of(void* user_data) {
    return *static_cast<Http2Session*>(user_data);
}

// A header list this many times the limit is not a large request but an attack on the decoder
// (a small block of references to one big table entry): the connection ends.
constexpr size_t kHpackBombFactor = 4;
// HEADERS may continue in CONTINUATION frames; real clients need one or two for the largest
// lists. Past this many, the connection ends (CVE-2024-27316 sends them without end).
constexpr uint32_t kMaxContinuations = 8;

int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* user_data) {
    Http2Session& s = session_of(user_data);
    switch (hd->type) {
        case NGHTTP2_HEADERS:
            s.block = {0, hd->length};
            s.block_stream = nullptr;
            if ((hd->stream_id & 1) && s.unknown_stream(hd->stream_id)) s.protocol_error();
            break;
        case NGHTTP2_CONTINUATION: {
            s.block.bytes += hd->length;
            const size_t limit = s.owner().config().limits.max_header_bytes;
            if (++s.block.frames > kMaxContinuations || s.block.bytes > kHpackBombFactor * limit)
                s.calm_down(Http2Abuse::Continuation);
            break;
        }
        case NGHTTP2_DATA:
            if (hd->length == 0 && !(hd->flags & NGHTTP2_FLAG_END_STREAM) &&
                !s.frame_allowed(Http2Abuse::EmptyData))
                s.calm_down(Http2Abuse::EmptyData);
            break;
        default:
            break;
    }
    return 0;
}

int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    Http2Session& s = session_of(user_data);
    s.block_stream = s.open_stream(frame->hd.stream_id);
    return 0;
}

int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
              const uint8_t* value, size_t valuelen, uint8_t, void* user_data) {
    Http2Session& s = session_of(user_data);
    // The stream whose header block this is (no map lookup per field); another block (a
    // request's trailers) is looked up.
    Http2Stream* stream = s.block_stream && s.block_stream->id() == frame->hd.stream_id
                              ? s.block_stream
                              : s.stream(frame->hd.stream_id);
    // Trailers of a request (HCAT_HEADERS after its body) are read and dropped: no handler
    // asks for them.
    if (!stream || stream->input() != Http2Stream::Input::Headers) return 0;
    const size_t limit = s.owner().config().limits.max_header_bytes;
    const size_t before = stream->header_list_size();
    if (before > limit) {
        // Over the limit already: counted, not kept (the stream is answered 431).
        stream->add_uncounted(namelen + valuelen);
        if (stream->header_list_size() > kHpackBombFactor * limit) {
            s.calm_down(Http2Abuse::Hpack);
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        return 0;
    }
    stream->add_field({reinterpret_cast<const char*>(name), namelen},
                      {reinterpret_cast<const char*>(value), valuelen});
    return 0;
}

int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    Http2Session& s = session_of(user_data);
    Http2Stream* stream = s.stream(frame->hd.stream_id);
    const bool end_stream = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
    switch (frame->hd.type) {
        case NGHTTP2_HEADERS:
            if (!stream) break;
            if (stream->input() == Http2Stream::Input::Headers) {
                stream->progress_ms = s.owner().loop().now_ms();
                stream->tree_priority = frame->hd.flags & NGHTTP2_FLAG_PRIORITY;
                stream->headers_done(!end_stream);
                s.mark_ready(*stream);
            } else if (end_stream) {
                stream->end_of_input();  // after trailers
                s.mark_ready(*stream);
            }
            break;
        case NGHTTP2_DATA:
            if (stream && end_stream) {
                stream->end_of_input();
                s.mark_ready(*stream);
            }
            break;
        case NGHTTP2_RST_STREAM:
            // A stream reset before its answer was complete: the work it began is wasted. A
            // client doing this in a loop (CVE-2023-44487) makes the server work for nothing.
            if (stream && stream->output() != Http2Stream::Output::Sent &&
                !s.frame_allowed(Http2Abuse::RapidReset))
                s.calm_down(Http2Abuse::RapidReset);
            break;
        case NGHTTP2_SETTINGS:
            if (!(frame->hd.flags & NGHTTP2_FLAG_ACK) && !s.frame_allowed(Http2Abuse::Settings))
                s.calm_down(Http2Abuse::Settings);
            break;
        case NGHTTP2_PING:
            if (!(frame->hd.flags & NGHTTP2_FLAG_ACK) && !s.frame_allowed(Http2Abuse::Ping))
                s.calm_down(Http2Abuse::Ping);
            break;
        case NGHTTP2_PRIORITY:
            if (!s.frame_allowed(Http2Abuse::Priority)) s.calm_down(Http2Abuse::Priority);
            break;
        case NGHTTP2_GOAWAY:
            s.count_goaway(false, frame->goaway.error_code);
            break;
        default:
            break;
    }
    return 0;
}

int on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t len,
                  void* user_data) {
    Http2Session& s = session_of(user_data);
    if (Http2Stream* stream = s.stream(stream_id)) {
        stream->progress_ms = s.owner().loop().now_ms();
        stream->data(data, len);
    } else {
        // Not ours any more: the window it took is given back at once.
        nghttp2_session_consume_connection(s.ng(), len);
    }
    return 0;
}

int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user_data) {
    session_of(user_data).stream_closed(stream_id, error_code);
    return 0;
}

int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    Http2Session& s = session_of(user_data);
    if (frame->hd.type == NGHTTP2_GOAWAY) s.count_goaway(true, frame->goaway.error_code);
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        if (Http2Stream* stream = s.stream(frame->hd.stream_id)) stream->sent();
    return 0;
}

ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                  nghttp2_data_source* source, void*) {
    return static_cast<Http2Stream*>(source->ptr)->read_body(buf, length, flags);
}

}  // namespace

nghttp2_data_source_read_callback http2_body_reader() {
    return read_body;
}

nghttp2_session* make_nghttp2_server(Http2Session& session) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);

    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    // Request bodies are consumed as they are buffered or taken by the handler: the window is
    // the backpressure (Http2Stream).
    nghttp2_option_set_no_auto_window_update(opt, 1);
    // The peer's SETTINGS_MAX_CONCURRENT_STREAMS bounds nothing here (no push).
    nghttp2_option_set_max_settings(opt, 32);

    nghttp2_session* ng = nullptr;
    nghttp2_session_server_new3(&ng, cb, &session, opt, http2_allocator());
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    return ng;
}

}  // namespace rivet::engine
