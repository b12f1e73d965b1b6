// CleanDisplayName: every name the outside review of issue #20 got through the lobby (C1
// controls, bidi overrides, zero-width-only and NBSP-only names, stacked combining marks,
// "bot (hard)"), and the names people really have, which must still pass.
#include "lobby-server/names.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/display_text.h"

namespace ply::lobby {
namespace {

// The sentence of a refusal, or "" when the name was accepted.
std::string Refusal(std::string_view raw) {
  absl::StatusOr<std::string> name = CleanDisplayName(raw);
  if (name.ok()) return "";
  EXPECT_TRUE(absl::IsInvalidArgument(name.status())) << name.status();
  return std::string(name.status().message());
}

void ExpectRefused(std::string_view raw, std::string_view why) {
  const std::string refusal = Refusal(raw);
  EXPECT_NE(refusal.find(why), std::string::npos) << "name bytes: " << raw.size() << ", refusal: '"
                                                  << refusal << "', expected: '" << why << "'";
}

TEST(CleanDisplayName, KeepsRealNamesInAnyScriptTrimmed) {
  for (const char* name : {"Ann",           "José",     "Jose\u0301",     "Zoë",
                           "Nguyễn Văn An", "李小龙",   "Алиса",          "سارا",
                           "שרה",           "Søren Ø.", "d'Artagnan",     "x",
                           "robot",         "Bottle",   "botanist",       "abbot",
                           "bo t",          "😀 smile",  "👩\u200d💻 coder", "می\u200cخواهم",
                           "a\u00a0b",      "Ǆemal"}) {
    absl::StatusOr<std::string> clean = CleanDisplayName(name);
    ASSERT_TRUE(clean.ok()) << name << ": " << clean.status();
    EXPECT_EQ(*clean, name);
  }
  EXPECT_EQ(*CleanDisplayName("  Ann  "), "Ann");
  EXPECT_EQ(*CleanDisplayName("\u00a0\u3000Ann\u2003"), "Ann");
  EXPECT_EQ(*CleanDisplayName("\u200dAnn\u200c"), "Ann");
}

TEST(CleanDisplayName, RefusesControlCharactersC0DelAndC1) {
  ExpectRefused(std::string("a\0b", 3), "control characters (U+0000 at character 2)");
  ExpectRefused("a\nb", "control characters (U+000A");
  ExpectRefused("a\rb", "control characters (U+000D");
  ExpectRefused("a\x1b[31mred", "control characters (U+001B");
  ExpectRefused("a\x7f", "control characters (U+007F");
  // C1: CSI and OSC, which terminals read as escape sequences.
  ExpectRefused("x\u009b31m", "control characters (U+009B at character 2)");
  ExpectRefused("x\u009d0;title\u009c", "control characters (U+009D");
  ExpectRefused("\u0085next line", "control characters (U+0085");
  ExpectRefused("a\u2028b", "control characters (U+2028");
}

TEST(CleanDisplayName, RefusesBidiOverridesIsolatesAndMarks) {
  for (const char* name :
       {"a\u202ab", "a\u202bb", "a\u202cb", "a\u202db", "evil\u202egnp.exe", "a\u2066b", "a\u2067b",
        "a\u2068b", "a\u2069b", "a\u200eb", "a\u200fb", "a\u061cb"}) {
    ExpectRefused(name, "bidirectional formatting characters");
  }
  ExpectRefused("evil\u202egnp", "(U+202E at character 5)");
}

TEST(CleanDisplayName, RefusesInvisibleNames) {
  // Zero-width only, NBSP only, other blanks only, and nothing at all.
  for (const char* name :
       {"", " ", "     ", "\u00a0", "\u00a0\u00a0\u00a0", "\u200d", "\u200c\u200d", "\u3000",
        "\u2003\u2002", "\u3164", "\u115f\u1160", "\u2800\u2800", "\u00a0\u200d\u00a0"}) {
    EXPECT_EQ(Refusal(name), "a display name is required") << "bytes: " << std::string(name).size();
  }
  // Characters that are invisible by design are refused wherever they stand.
  ExpectRefused("\u200b", "invisible formatting characters (U+200B");
  ExpectRefused("\u200b\u200b\u200b", "invisible formatting characters");
  ExpectRefused("a\u200bb", "invisible formatting characters");
  ExpectRefused("\ufeffAnn", "invisible formatting characters (U+FEFF");
  // Default_Ignorable code points that were let through (the third hostile review).
  ExpectRefused("ali\u17b4ce", "invisible formatting characters (U+17B4");
  ExpectRefused("b\u17b5ot (hard)", "invisible formatting characters (U+17B5");
  ExpectRefused("a\u034fb", "invisible formatting characters (U+034F");
  ExpectRefused("ab\u180b", "invisible formatting characters (U+180B");
  ExpectRefused("a\U0001bca0b", "invisible formatting characters (U+1BCA0");
  ExpectRefused("a\U000e0200b", "invisible formatting characters (U+E0200");
  ExpectRefused("a\u2060b", "invisible formatting characters");
  ExpectRefused("a\u00adb", "invisible formatting characters (U+00AD");
  ExpectRefused("a\U000E0041b", "invisible formatting characters (U+E0041");
}

TEST(CleanDisplayName, BoundsCombiningMarks) {
  EXPECT_TRUE(CleanDisplayName("e\u0301\u0323").ok());
  ExpectRefused("e\u0301\u0323\u0302", "at most 2 combining marks on one character");
  // A "Zalgo" name: each letter carries a stack.
  ExpectRefused("Z\u0336\u0351\u0352\u0353a\u0300\u0301\u0302\u0303", "at most 2 combining marks");
  ExpectRefused("\u0301Ann", "a combining mark without a character before it");
  ExpectRefused("Ann \u0301x", "a combining mark without a character before it");
  // Marks of other blocks count too.
  ExpectRefused("a\u20d0\u20d1\u20d2", "at most 2 combining marks");
  ExpectRefused("a\u1dc0\u1dc1\u1dc2", "at most 2 combining marks");
  ExpectRefused("\u05d0\u05b0\u05b1\u05b2", "at most 2 combining marks");
}

TEST(CleanDisplayName, RefusesNamesThatReadAsABot) {
  for (const char* name : {"bot", "BOT", "Bot", "bot (hard)", "bot(hard)", "Bot (easy)", "bot x",
                           "  bot  ", "bot\u00a0(hard)", "b\u200dot", "bot\u3000perfect"}) {
    ExpectRefused(name, "kept for bot seats");
  }
  // However the bot is written: a Cyrillic o (U+043E) or small-capital letters, fullwidth
  // letters, a combining mark on one of them, or a player's spelling of it ("bot:hard").
  for (const char* name :
       {"b\u043et (hard)", "\u0299\u1d0f\u1d1b (easy)", "\uff42\uff4f\uff54",
        "\uff42\uff4f\uff54\uff08hard\uff09", "bo\u0301t (hard)", "bot:hard", "B0T (hard)"}) {
    ExpectRefused(name, "kept for bot seats");
  }
}

TEST(CheckPlayerName, KeepsBotNamesHoweverTheyAreWritten) {
  // A hostile review registered "b0t-hard" and "80t_hard", which read as bot:hard on a
  // leaderboard; "bot_hard" and "Bot.easy" were refused.
  // A third review: "6ot-hard" and "bo7" read the same.
  for (const char* name : {"bot_hard", "Bot.easy", "b0t-hard", "80t_hard", "B0T", "b.o.t", "8ot",
                           "6ot-hard", "60t", "bo7", "b07_easy"}) {
    absl::Status s = CheckPlayerName(name);
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_NE(s.message().find("kept for the bots"), std::string_view::npos) << name << ": " << s;
  }
  for (const char* name : {"bo", "boat", "abbot", "b0b", "8ball", "robot", "bolt", "6ix", "bo8"}) {
    EXPECT_TRUE(CheckPlayerName(name).ok()) << name;
  }
}

TEST(CheckPlayerName, KeepsNamesThatSpeakForTheHouse) {
  // A player "admin" or "guest" on a leaderboard, or "you" beside a seat, misleads the others.
  for (const char* name : {"admin", "Admin", "adm1n", "ADM.IN", "guest", "root", "system", "ply",
                           "moderator", "operator", "you", "open", "0pen"}) {
    absl::Status s = CheckPlayerName(name);
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_NE(s.message().find("is kept"), std::string_view::npos) << name << ": " << s;
  }
  for (const char* name : {"admiral", "guests4", "rooted", "opener", "young", "plyr"}) {
    EXPECT_TRUE(CheckPlayerName(name).ok()) << name;
  }
}

TEST(CleanDisplayName, RefusesTheBoardsMarks) {
  // A guest "alice (you)" read, on its opponent's board, as the opponent's own seat.
  for (const char* name : {"alice (you)", "(you)", "bob (GUEST)", "(open)", "x(\u043epen)",
                           "carol \uff08you\uff09", "dave (y\u200dou)"}) {
    ExpectRefused(name, "the board writes");
  }
  for (const char* name : {"alice (yours)", "you", "guest", "open door", "(bob)"}) {
    EXPECT_TRUE(CleanDisplayName(name).ok()) << name;
  }
}

TEST(NameSkeleton, NamesThatLookAlikeHaveOneSkeleton) {
  const std::string alice = NameSkeleton("alice");
  EXPECT_EQ(alice, "allce");
  for (const char* like :
       {"aIice", "ALICE", "a1ice", "a|ice", "\u0430lice", "\uff41\uff4c\uff49\uff43\uff45",
        "al\u0456ce", "a_lice", "a.l-ice", "ali\u0441e", "\U0001d41a\U0001d425ice"}) {
    EXPECT_EQ(NameSkeleton(like), alice) << like;
  }
  EXPECT_EQ(NameSkeleton("rnoon"), NameSkeleton("moon"));
  EXPECT_EQ(NameSkeleton("vvolf"), NameSkeleton("wolf"));
  EXPECT_EQ(NameSkeleton("B0B"), NameSkeleton("bob"));
  // Names that differ to the eye keep different skeletons.
  for (const char* other : {"alicia", "alex", "bob", "\u0410\u043b\u0438\u0441\u0430", "\u674e"}) {
    EXPECT_NE(NameSkeleton(other), alice) << other;
  }
  EXPECT_NE(NameSkeleton("ann"), NameSkeleton("anna"));
}

TEST(CleanDisplayName, BoundsLengthInCharactersAndBytes) {
  EXPECT_TRUE(CleanDisplayName(std::string(24, 'a')).ok());
  ExpectRefused(std::string(25, 'a'), "at most 24 characters");
  // 20 three-byte characters: within 24 characters, over 40 bytes.
  std::string wide;
  for (int i = 0; i < 13; ++i) wide += "龙";
  EXPECT_TRUE(CleanDisplayName(wide).ok());
  wide += "龙";
  ExpectRefused(wide, "at most 40 bytes");
  // Blanks around the name do not count.
  EXPECT_TRUE(CleanDisplayName("   " + std::string(24, 'a') + "   ").ok());
  // A huge input is refused without being echoed.
  const std::string huge(100000, 'a');
  EXPECT_LT(Refusal(huge).size(), 100u);
}

TEST(CleanDisplayName, RefusesInvalidUtf8WithoutEchoingIt) {
  for (std::string name :
       {std::string("a\xff"), std::string("\xc0\xaf"), std::string("\xe0\x80\xaf"),
        std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"), std::string("abc\xe6\x9d"),
        std::string("\x80"), std::string("\xc3(")}) {
    ExpectRefused(name, "must be valid UTF-8");
  }
  EXPECT_EQ(Refusal("ab\xff"), "a display name must be valid UTF-8 (byte 3 is not)");
}

TEST(CleanDisplayName, RefusesPrivateUseAndNonCharacters) {
  ExpectRefused("a\ue000", "private-use or non-characters (U+E000");
  ExpectRefused("a\uffff", "private-use or non-characters");
  ExpectRefused("a\ufdd0", "private-use or non-characters");
  ExpectRefused("a\U0010FFFD", "private-use or non-characters");
}

// What the lobby refuses in a name is what every client's DisplayText blanks out of a record
// from elsewhere: one table of control and bidi characters (engine/core/display_text.h).
TEST(DisplayText, BlanksWhatNamesRefuse) {
  const std::string mark = "\xEF\xBF\xBD";  // U+FFFD
  for (const char* bad : {"\x1b", "\xc2\x9b", "\u202e", "\u2067", "\u200f", "\u061c", "\u2028"}) {
    EXPECT_FALSE(CleanDisplayName(std::string("ab") + bad + "cd").ok()) << bad;
    EXPECT_EQ(DisplayText(std::string("ab") + bad + "cd"), "ab" + mark + "cd") << bad;
  }
  EXPECT_EQ(DisplayText("a\xff\xc0\x80"
                        "b"),
            "a" + mark + mark + mark + "b")
      << "not UTF-8, overlong";
  EXPECT_EQ(DisplayText("Zo\u00eb \u674e"), "Zo\u00eb \u674e");
  char32_t c = 0;
  EXPECT_EQ(DecodeUtf8("\xf0\x9f\x99\x82", &c), 4u);
  EXPECT_EQ(c, U'\U0001F642');
  EXPECT_EQ(DecodeUtf8("\xed\xa0\x80", &c), 0u) << "a surrogate";
  EXPECT_EQ(DecodeUtf8("", &c), 0u);
}

}  // namespace
}  // namespace ply::lobby
