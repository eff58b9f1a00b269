// test_names_cpp - the C++ scope guard records runtime names under their
// own names: one CAP_SCOPE site fed 90 std::strings, CAP_SCOPE_ID guards
// and CAP_BEGIN_ID pairs by registered id. Plain asserts (no cmocka).
#include <capture/capture.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "names_readback.h"

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,        \
                         __LINE__, #c);                                        \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

static void load(const std::string &name)
{
    CAP_SCOPE(name.c_str()); // one call site, a different string each time
}

int main()
{
    char path[] = "/tmp/cap_test_names_cpp_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    std::vector<std::string> assets;
    for (int i = 0; i < 90; i++)
        assets.push_back("asset_" + std::to_string(i) + "_mesh");
    std::vector<uint32_t> ids;
    for (const std::string &a : assets)
        ids.push_back(cap_name_register((a + "_by_id").c_str(), __FILE__,
                                        __LINE__));
    CHECK(cap_open(path, nullptr) == CAP_OK);
    CAP_THREAD("main");
    for (int pass = 0; pass < 2; pass++) {
        CAP_SCOPE("pass");
        for (size_t i = 0; i < assets.size(); i++) {
            load(assets[i]);
            CAP_SCOPE_ID(ids[i]);
            CAP_BEGIN_ID(ids[(i + 1) % ids.size()]);
            CAP_END();
        }
    }
    CHECK(cap_close() == CAP_OK);
    static nr_file f;
    CHECK(nr_read(&f, path) == 0);
    unlink(path);
    CHECK(nr_count(&f, "pass") == 2);
    for (const std::string &a : assets) {
        CHECK(nr_count(&f, a.c_str()) == 2);
        CHECK(nr_count(&f, (a + "_by_id").c_str()) == 4);
    }
    CHECK(f.scopes == 2 + 2 * 3 * 90);
    CHECK(f.stats.unnamed_ids == 0);
    std::printf("ok: 90 runtime names, each under its own name (C++)\n");
    return 0;
}
