/*
 * Forwarding of the ranks' stdout and stderr.  Output is passed on in whole
 * lines, so lines of different ranks never mix inside a line; a line that
 * grows past PARTIAL_MAX without a newline goes out in pieces rather than
 * holding memory.  Bytes are passed unchanged except for the "[rank] "
 * prefix of --tag-output (and a newline it adds after an unterminated last
 * line, so the next rank's prefix starts a line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shoalrun.h"

#define CHUNK (64 * 1024)
#define PARTIAL_MAX (64 * 1024)
#define STDIN_BUF (64 * 1024)

struct shoalrun_stream {
    shoalrun_stdio_t *io;
    int rank;
    int fd;   /* read end of the rank's pipe; -1 at EOF */
    int dest; /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int mid_line; /* tag mode: the last piece written ended inside a line */
};

/* Our own stdout or stderr went away (EPIPE): drop what would go there. */
static int dest_broken[3];

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0 && !dest_broken[fd]) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            poll(&pfd, 1, -1);
        } else if (w < 0 && errno != EINTR) {
            dest_broken[fd] = 1;
        }
    }
}

/* Write data[0..n) with "[rank] " at the start of every line. */
static void write_tagged(shoalrun_stream_t *s, const char *data, size_t n)
{
    char tag[24];
    int tlen = snprintf(tag, sizeof(tag), "[%d] ", s->rank);
    size_t lines = 1;

    for (size_t i = 0; i < n; i++)
        lines += data[i] == '\n';
    char *out = malloc(n + lines * (size_t)tlen);
    if (out == NULL) {
        write_all(s->dest, data, n); /* untagged beats lost */
        return;
    }
    size_t o = 0, i = 0;
    while (i < n) {
        const char *nl = memchr(data + i, '\n', n - i);
        size_t seg = nl ? (size_t)(nl - (data + i)) + 1 : n - i;
        if (!s->mid_line) {
            memcpy(out + o, tag, (size_t)tlen);
            o += (size_t)tlen;
        }
        memcpy(out + o, data + i, seg);
        o += seg;
        i += seg;
        s->mid_line = data[i - 1] != '\n';
    }
    write_all(s->dest, out, o);
    free(out);
}

/* Pass on the complete lines held (everything when flush is set). */
static void stream_emit(shoalrun_stream_t *s, int flush)
{
    size_t end = 0;

    if (s->io->sink != NULL) { /* a daemon: the launcher cuts the lines */
        if (s->len > 0)
            s->io->sink(s->io->sink_ctx, s->rank, s->dest, s->buf, s->len);
        s->len = 0;
        return;
    }
    for (size_t i = s->len; i > 0; i--)
        if (s->buf[i - 1] == '\n') {
            end = i;
            break;
        }
    if (flush || s->len - end >= PARTIAL_MAX)
        end = s->len;
    if (end == 0)
        return;
    if (s->io->tag)
        write_tagged(s, s->buf, end);
    else
        write_all(s->dest, s->buf, end);
    memmove(s->buf, s->buf + end, s->len - end);
    s->len -= end;
}

/* The stream ends: what is held goes out, and a tagged line is ended. */
static void stream_finish(shoalrun_stream_t *s)
{
    stream_emit(s, 1);
    if (s->io->tag && s->mid_line) {
        write_all(s->dest, "\n", 1);
        s->mid_line = 0;
    }
}

static void stream_close(shoalrun_stream_t *s)
{
    if (s->fd < 0)
        return;
    stream_finish(s);
    shoalrun_loop_remove(s->io->loop, s->fd);
    close(s->fd);
    s->fd = -1;
    s->io->open--;
}

static int stream_reserve(shoalrun_stream_t *s, size_t more)
{
    if (s->len + more <= s->cap)
        return 0;
    size_t cap = s->len + more;
    char *b = realloc(s->buf, cap);
    if (b == NULL)
        return -1;
    s->buf = b;
    s->cap = cap;
    return 0;
}

/* Read at most rounds chunks of what the pipe holds; returns 1 when it
 * may hold more (EAGAIN or rounds used up), 0 once the stream is closed. */
static int stream_read(shoalrun_stream_t *s, int rounds)
{
    /* Our reader is gone (`shoalrun ... | head`): let the rank see EPIPE
     * too, as it would writing to the pipe itself. */
    if (dest_broken[s->dest]) {
        stream_close(s);
        return 0;
    }
    while (rounds-- > 0) {
        if (stream_reserve(s, CHUNK) != 0) {
            stream_emit(s, 1);
            return 1;
        }
        ssize_t n = read(s->fd, s->buf + s->len, CHUNK);
        if (n > 0) {
            s->len += (size_t)n;
            stream_emit(s, 0);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            rounds++;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        stream_close(s); /* EOF, or an error that ends the stream */
        return 0;
    }
    return 1;
}

static void stream_on_io(void *ctx, int fd, short revents)
{
    /* A bounded number of reads, so one chatty rank cannot starve PMI. */
    stream_read(ctx, 16);
}

int shoalrun_stdio_init(shoalrun_stdio_t *io, shoalrun_loop_t *loop,
                        int nranks, int tag)
{
    memset(io, 0, sizeof(*io));
    io->loop = loop;
    io->tag = tag;
    io->nranks = nranks;
    io->in_fd = io->to_rank0 = -1;
    io->streams = calloc(2 * (size_t)nranks, sizeof(*io->streams));
    if (io->streams == NULL)
        return base_err(SHOAL_ERR_NOMEM, "shoalrun: out of memory");
    for (int i = 0; i < 2 * nranks; i++) {
        io->streams[i].fd = -1;
        io->streams[i].io = io;
        io->streams[i].rank = i / 2;
        io->streams[i].dest = 1 + i % 2;
    }
    return SHOAL_OK;
}

void shoalrun_stdio_data(shoalrun_stdio_t *io, int rank, int dest,
                         const char *data, size_t len)
{
    if (rank < 0 || rank >= io->nranks || (dest != 1 && dest != 2))
        return;
    shoalrun_stream_t *s = &io->streams[2 * rank + dest - 1];
    if (dest_broken[dest])
        return;
    if (stream_reserve(s, len) != 0) {
        stream_emit(s, 1);
        write_all(dest, data, len); /* unbuffered beats lost */
        return;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    stream_emit(s, 0);
}

static int stream_attach(shoalrun_stdio_t *io, shoalrun_stream_t *s, int rank,
                         int fd, int dest)
{
    s->io = io;
    s->rank = rank;
    s->dest = dest;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int status = shoalrun_loop_add(io->loop, fd, POLLIN, stream_on_io, s);
    if (status != SHOAL_OK) {
        close(fd);
        return status;
    }
    s->fd = fd;
    io->open++;
    return SHOAL_OK;
}

int shoalrun_stdio_attach(shoalrun_stdio_t *io, int rank, int out_fd,
                          int err_fd)
{
    int status = stream_attach(io, &io->streams[2 * rank], rank, out_fd, 1);

    if (status != SHOAL_OK) {
        close(err_fd);
        return status;
    }
    return stream_attach(io, &io->streams[2 * rank + 1], rank, err_fd, 2);
}

/* ---- stdin to rank 0 (terminal case) ------------------------------------- */

static void stdin_update(shoalrun_stdio_t *io);

static void stdin_stop(shoalrun_stdio_t *io)
{
    if (io->in_fd >= 0)
        shoalrun_loop_remove(io->loop, io->in_fd);
    io->in_fd = -1;
    if (io->to_rank0 >= 0) {
        shoalrun_loop_remove(io->loop, io->to_rank0);
        close(io->to_rank0);
    }
    io->to_rank0 = -1;
}

static void stdin_on_read(void *ctx, int fd, short revents)
{
    shoalrun_stdio_t *io = ctx;
    ssize_t n = read(fd, io->in_buf + io->in_len, STDIN_BUF - io->in_len);

    if (n > 0)
        io->in_len += (size_t)n;
    else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        io->in_eof = 1;
        shoalrun_loop_remove(io->loop, fd);
        io->in_fd = -1;
    }
    stdin_update(io);
}

static void stdin_on_write(void *ctx, int fd, short revents)
{
    shoalrun_stdio_t *io = ctx;
    ssize_t n = write(fd, io->in_buf, io->in_len);

    if (n > 0) {
        memmove(io->in_buf, io->in_buf + n, io->in_len - (size_t)n);
        io->in_len -= (size_t)n;
        if (io->fed != NULL) /* the launcher may send more */
            io->fed(io->fed_ctx, (size_t)n);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
        stdin_stop(io); /* rank 0 closed its stdin */
        return;
    }
    stdin_update(io);
}

/* Read stdin while there is room; write while there is data. */
static void stdin_update(shoalrun_stdio_t *io)
{
    if (io->to_rank0 < 0)
        return;
    if (io->in_eof && io->in_len == 0) {
        stdin_stop(io);
        return;
    }
    if (io->in_fd >= 0)
        shoalrun_loop_set_events(io->loop, io->in_fd,
                                 io->in_len < STDIN_BUF ? POLLIN : 0);
    shoalrun_loop_set_events(io->loop, io->to_rank0,
                             io->in_len > 0 ? POLLOUT : 0);
}

int shoalrun_stdio_stdin_for_rank0(shoalrun_stdio_t *io, int *child_fd_p)
{
    int p[2];

    if (!isatty(STDIN_FILENO)) {
        *child_fd_p = STDIN_FILENO;
        return SHOAL_OK;
    }
    io->in_buf = malloc(STDIN_BUF);
    if (io->in_buf == NULL || pipe2(p, O_CLOEXEC) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "stdin pipe: %s", strerror(errno));
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    io->in_fd = STDIN_FILENO;
    io->to_rank0 = p[1];
    if (shoalrun_loop_add(io->loop, io->in_fd, POLLIN, stdin_on_read, io) ||
        shoalrun_loop_add(io->loop, io->to_rank0, 0, stdin_on_write, io)) {
        close(p[0]);
        stdin_stop(io);
        return SHOAL_ERR_NOMEM;
    }
    *child_fd_p = p[0];
    return SHOAL_OK;
}

int shoalrun_stdio_stdin_fed(shoalrun_stdio_t *io, int *child_fd_p)
{
    int p[2];

    io->in_buf = malloc(STDIN_BUF);
    if (io->in_buf == NULL || pipe2(p, O_CLOEXEC) != 0)
        return base_err(SHOAL_ERR_SYSTEM, "stdin pipe: %s", strerror(errno));
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    io->to_rank0 = p[1];
    if (shoalrun_loop_add(io->loop, io->to_rank0, 0, stdin_on_write, io)) {
        close(p[0]);
        stdin_stop(io);
        return SHOAL_ERR_NOMEM;
    }
    *child_fd_p = p[0];
    return SHOAL_OK;
}

void shoalrun_stdio_stdin_feed(shoalrun_stdio_t *io, const char *data,
                               size_t len)
{
    if (io->to_rank0 < 0) { /* rank 0 is gone: take it as read */
        if (io->fed != NULL && len > 0)
            io->fed(io->fed_ctx, len);
        return;
    }
    if (len == 0)
        io->in_eof = 1;
    else if (len > STDIN_BUF - io->in_len) {
        shoalrun_say("internal error: stdin data beyond the window");
        return;
    }
    memcpy(io->in_buf + io->in_len, data, len);
    io->in_len += len;
    stdin_update(io);
}

size_t shoalrun_stdio_stdin_window(void)
{
    return STDIN_BUF;
}

void shoalrun_stdio_rank0_exited(shoalrun_stdio_t *io)
{
    stdin_stop(io);
}

void shoalrun_stdio_drain(shoalrun_stdio_t *io, uint64_t wait_ns)
{
    uint64_t until = base_time_ns() + wait_ns;

    for (;;) {
        struct pollfd pfds[64];
        int n = 0;

        /* Read each open stream until it would block; a writer that never
         * stops cannot keep us here (at most 4 MiB a stream a round). */
        for (int i = 0; io->streams != NULL && i < 2 * io->nranks; i++) {
            shoalrun_stream_t *s = &io->streams[i];
            if (s->fd >= 0 && stream_read(s, 64) && n < 64) {
                pfds[n].fd = s->fd;
                pfds[n++].events = POLLIN;
            }
        }
        uint64_t now = base_time_ns();
        if (io->open == 0 || now >= until)
            return;
        uint64_t ms = (until - now + 999999) / 1000000;
        if (n == 0) /* none could be polled: look again in a moment */
            ms = 1;
        if (poll(pfds, (nfds_t)n, ms > 100 ? 100 : (int)ms) < 0 &&
            errno != EINTR)
            return;
    }
}

void shoalrun_stdio_fini(shoalrun_stdio_t *io)
{
    /* Whatever the pipes hold still goes out, however the job ended. */
    shoalrun_stdio_drain(io, 0);
    for (int i = 0; io->streams != NULL && i < 2 * io->nranks; i++) {
        stream_close(&io->streams[i]);
        if (io->streams[i].len > 0 || io->streams[i].mid_line)
            stream_finish(&io->streams[i]); /* a remote rank's last line */
        free(io->streams[i].buf);
    }
    free(io->streams);
    io->streams = NULL;
    stdin_stop(io);
    free(io->in_buf);
    io->in_buf = NULL;
}
