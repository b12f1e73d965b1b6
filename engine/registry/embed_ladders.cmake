# Turns every game's ladder file (the list LADDERS, each GAME=PATH) into a C++ source (OUT)
# defining kPlyLadderTexts, so that every binary carries the ladders without reading files.
set(body "")
set(count 0)
foreach(entry ${LADDERS})
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 game)
  list(GET parts 1 path)
  file(READ "${path}" text)
  string(APPEND body "    {\"${game}\", R\"ladder(${text})ladder\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  set(body "    {\"\", \"\"},\n")
endif()
file(WRITE "${OUT}"
  "// Generated from games/*/ladder.txt by embed_ladders.cmake.\n"
  "struct PlyLadderText {\n  const char* game;\n  const char* text;\n};\n"
  "extern const PlyLadderText kPlyLadderTexts[];\n"
  "extern const int kPlyLadderTextCount;\n"
  "const PlyLadderText kPlyLadderTexts[] = {\n${body}};\n"
  "const int kPlyLadderTextCount = ${count};\n")
