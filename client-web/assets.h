// The page's files (static/), built into the binary so that one file is all a deployment of
// ply-web needs and the page can never load anything from elsewhere.
#ifndef PLY_CLIENT_WEB_ASSETS_H_
#define PLY_CLIENT_WEB_ASSETS_H_

#include <cstddef>
#include <string>

namespace ply::web {

struct Asset {
  const char* data;
  size_t size;
  // The Content-Type it is served with.
  const char* type;
};

// The file `name` of static/ ("index.html", "app.js"); null when there is none.
const Asset* FindAsset(const std::string& name);

}  // namespace ply::web

#endif  // PLY_CLIENT_WEB_ASSETS_H_
