// tls::Session: OpenSSL over a BIO of our own that reads from the ciphertext the engine lends and
// appends what OpenSSL writes to the engine's output, so the session never owns a socket.
#include "tls/session.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "tls/context.hpp"

namespace rivet::tls {

struct Session::Lend {
    Lend(Io& io, std::string_view& in, std::string& out) : io_(io) {
        io_.in = &in;
        io_.out = &out;
    }
    ~Lend() { io_ = {}; }
    Io& io_;
};

// The BIO's callbacks: a source of the lent ciphertext and a sink into the lent output. OpenSSL
// asks for a record's header, then its body; a read that finds nothing says "retry", which
// OpenSSL reports as SSL_ERROR_WANT_READ.
struct BioMethod {
    static int read(BIO* b, char* buf, int len) {
        BIO_clear_retry_flags(b);
        auto* io = static_cast<Session::Io*>(BIO_get_data(b));
        if (!io->in || io->in->empty() || len <= 0) {
            BIO_set_retry_read(b);
            return -1;
        }
        const size_t n = std::min(size_t(len), io->in->size());
        std::memcpy(buf, io->in->data(), n);
        io->in->remove_prefix(n);
        return int(n);
    }
    static int write(BIO* b, const char* data, int len) {
        BIO_clear_retry_flags(b);
        auto* io = static_cast<Session::Io*>(BIO_get_data(b));
        if (!io->out) {  // only inside a call that lends an output
            BIO_set_retry_write(b);
            return -1;
        }
        io->out->append(data, size_t(len));
        return len;
    }
    static long ctrl(BIO*, int cmd, long, void*) {
        return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
    }
    static int create(BIO* b) {
        BIO_set_init(b, 1);
        return 1;
    }
    static int destroy(BIO*) { return 1; }

    static const BIO_METHOD* get() {
        static const BIO_METHOD* method = [] {
            BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rivet");
            if (!m) throw std::bad_alloc();
            BIO_meth_set_read(m, read);
            BIO_meth_set_write(m, write);
            BIO_meth_set_ctrl(m, ctrl);
            BIO_meth_set_create(m, create);
            BIO_meth_set_destroy(m, destroy);
            return m;
        }();
        return method;
    }
};

Session::Session(std::shared_ptr<const Context> context) : context_(std::move(context)) {
    ssl_ = SSL_new(context_->default_ctx());
    BIO* bio = ssl_ ? BIO_new(BioMethod::get()) : nullptr;
    if (!bio) {
        SSL_free(ssl_);
        ERR_clear_error();
        throw std::bad_alloc();
    }
    BIO_set_data(bio, &io_);
    SSL_set_bio(ssl_, bio, bio);  // one BIO both ways: the SSL takes the one reference
    SSL_set_accept_state(ssl_);
    SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
}

Session::~Session() {
    // OpenSSL takes a session freed before a close_notify for a broken one and drops it from the
    // session cache. A connection that ends without one (an idle timeout, the client's close)
    // is not broken: its session stays resumable, as nginx keeps it.
    if (done_ && !broken_) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(ssl_);
}

Session::Status Session::handshake(std::string_view& in, std::string& out) {
    ERR_clear_error();
    Lend lend(io_, in, out);
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) {
        done_ = true;
        return Status::Ready;
    }
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ) return Status::WantInput;
    failure_ = e == SSL_ERROR_ZERO_RETURN ? Failure::PeerClosed : classify_error();
    ERR_clear_error();  // the queue is the thread's: the next connection starts clean
    return Status::Failed;
}

Failure Session::classify_error() const {
    const unsigned long err = ERR_peek_error();
    if (ERR_GET_LIB(err) != ERR_LIB_SSL) return Failure::Malformed;
    const int reason = ERR_GET_REASON(err);
    // OpenSSL reports a received alert as its code plus SSL_AD_REASON_OFFSET.
    if (reason >= SSL_AD_REASON_OFFSET) return Failure::PeerAlert;
    switch (reason) {
        case SSL_R_UNSUPPORTED_PROTOCOL:
        case SSL_R_VERSION_TOO_LOW:
        case SSL_R_NO_PROTOCOLS_AVAILABLE:
        case SSL_R_NO_SHARED_CIPHER:
        case SSL_R_NO_SHARED_GROUPS:
        case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
        case SSL_R_NO_APPLICATION_PROTOCOL:
            return Failure::NoCommon;
        default:
            return Failure::Malformed;
    }
}

size_t Session::read(std::string_view& in, char* buf, size_t room, std::string& out,
                     Status& status) {
    ERR_clear_error();
    Lend lend(io_, in, out);
    size_t produced = 0;
    status = Status::Ready;  // stays so only when `room` filled up
    while (produced < room) {
        size_t got = 0;
        if (SSL_read_ex(ssl_, buf + produced, room - produced, &got) == 1) {
            produced += got;
            continue;
        }
        switch (SSL_get_error(ssl_, 0)) {
            case SSL_ERROR_WANT_READ:
                status = Status::WantInput;
                break;
            case SSL_ERROR_ZERO_RETURN:
                status = Status::Closed;
                break;
            default:
                status = Status::Failed;
                broken_ = true;
                ERR_clear_error();
                break;
        }
        break;
    }
    return produced;
}

bool Session::write(std::string_view data, std::string& out) {
    ERR_clear_error();
    std::string_view none;
    Lend lend(io_, none, out);
    while (!data.empty()) {
        size_t written = 0;
        if (SSL_write_ex(ssl_, data.data(), data.size(), &written) != 1) {
            broken_ = true;
            ERR_clear_error();
            return false;
        }
        data.remove_prefix(written);
    }
    return true;
}

void Session::close_notify(std::string& out) {
    if (!done_) return;
    std::string_view none;
    Lend lend(io_, none, out);
    SSL_shutdown(ssl_);  // sends ours; the client's is not waited for (the socket closes)
    ERR_clear_error();
}

bool Session::partial_record() const {
    return SSL_has_pending(ssl_) == 1;
}

bool Session::resumed() const {
    return SSL_session_reused(ssl_) == 1;
}

bool Session::tls13() const {
    return SSL_version(ssl_) == TLS1_3_VERSION;
}

std::string_view Session::version() const {
    return SSL_get_version(ssl_);
}

std::string_view Session::cipher() const {
    const char* name = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_));
    return name ? name : "";
}

std::string_view Session::server_name() const {
    const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
    return name ? name : "";
}

std::string_view Session::alpn() const {
    const unsigned char* p = nullptr;
    unsigned len = 0;
    SSL_get0_alpn_selected(ssl_, &p, &len);
    return p ? std::string_view(reinterpret_cast<const char*>(p), len) : std::string_view();
}

}  // namespace rivet::tls
