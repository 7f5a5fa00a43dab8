// result.h — expected failures are values: a Result holds a T or a one-line error.
#ifndef XMEMD_RESULT_H
#define XMEMD_RESULT_H

#include <optional>
#include <string>
#include <utility>

namespace xmem::server
{

template <class T> class Result
{
  public:
    static Result ok(T v)
    {
        Result r;
        r.m_value.emplace(std::move(v));
        return r;
    }
    static Result failure(std::string why)
    {
        Result r;
        r.m_error = std::move(why);
        return r;
    }
    explicit operator bool() const { return m_value.has_value(); }
    T &value() { return *m_value; }
    const T &value() const { return *m_value; }
    const std::string &error() const { return m_error; }

  private:
    std::optional<T> m_value;
    std::string m_error;
};

} // namespace xmem::server
#endif
