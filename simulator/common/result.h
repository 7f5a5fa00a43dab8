// Result<T>: the project-wide value type for expected failures (ARCHITECTURE.md,
// "Error handling rule"). An Error carries one line that starts with "xmem: " and names the
// thing that is wrong and the fix. Only fatal start-up errors throw.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace xmem
{

struct Error {
    std::string message; // one line, starts with "xmem: "
};

template <class T> class Result
{
  public:
    static Result ok(T value) { return Result(std::in_place_index<0>, std::move(value)); }
    static Result success(T value) { return ok(std::move(value)); }
    static Result fail(Error error) { return Result(std::in_place_index<1>, std::move(error)); }
    static Result fail(std::string message) { return fail(Error{std::move(message)}); }

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<0>(m_state); }
    const T &value() const & { return std::get<0>(m_state); }
    T &&value() && { return std::get<0>(std::move(m_state)); }
    const Error &error() const { return std::get<1>(m_state); }

  private:
    template <std::size_t I, class V>
    Result(std::in_place_index_t<I> tag, V &&v) : m_state(tag, std::forward<V>(v))
    {
    }

    std::variant<T, Error> m_state;
};

// Result<void> cannot have both a static ok() and the ok() query, so its success value is
// made with success(): `return Result<void>::success();`.
template <> class Result<void>
{
  public:
    static Result success() { return Result(); }
    static Result fail(Error error) { return Result(std::move(error)); }
    static Result fail(std::string message) { return fail(Error{std::move(message)}); }

    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return m_error; }

  private:
    Result() = default;
    explicit Result(Error e) : m_failed(true), m_error(std::move(e)) {}

    bool m_failed = false;
    Error m_error;
};

} // namespace xmem
