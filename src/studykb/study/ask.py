"""``ask``: a question in English or Chinese, read as one of the plan commands.

A question is read by its parts, not matched against whole sentences:

* what it asks for, from the words that mark it, and in which direction: a plan for
  what comes *before* ("before", "prerequisites of", "how do I get started with",
  "recommend readings on", 之前, 前置, 需要哪些基础, 先), what comes *after* something
  known ("after", "I know X, what next", "what builds on", 学完, 之后, 已经会), what is
  ready *next* from what I know ("next", 下一步, 接下来), related reading ("related to",
  相关, 类似), what something *is* ("what is", "explain", 是什么, 介绍) or progress
  ("progress", "how am I doing", 进度, 学到哪);
* question words, verbs of reading and learning, and the small words around them (what,
  should, I, read, 什么, 应该, 学习, 看...), which are set aside;
* the target: what is left, resolved like a reference. With ``resolves`` (does this name
  a document?), a leftover that names nothing is searched for the longest part that does,
  so a target that contains a small word ("Learn the Basics") is still found; the
  leftover as typed is kept (:attr:`Question.typed`) so a front end can say when the
  target is only part of it.

A question is at most :data:`MAX_CHARS` characters, and reading it costs work in
proportion to its length (a name is looked for in runs of at most :data:`MAX_PIECES`
words): a pasted page is refused, never read for a minute.

A question with no reading verb and nothing that marks what it asks is not understood;
"what is X" only when X names a document.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from studykb.errors import UsageError

if TYPE_CHECKING:
    from studykb.vault import Vault

BEFORE, AFTER, NEXT, RELATED, ABOUT, STATUS = (
    "before",
    "after",
    "next",
    "related",
    "about",
    "status",
)
#: Longest question read, in characters (after spaces are squeezed).
MAX_CHARS = 400


def _words(text: str) -> list[str]:
    return text.split()


#: Words that mark what a question asks, strongest first: the first that matches decides
#: ("what should I read now, before FSDP2" asks for a plan).
MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        STATUS,
        (
            r"\bhow am i doing\b",
            r"\bhow (?:far|much) (?:am i|have i (?:got|gotten|come|done))\b",
            r"\bhow far along am i\b",
            r"\bwhere am i\b",
            r"\bprogress\b",
            r"\bstatus\b",
            r"\bwhat (?:have|did) i (?:already )?(?:read|finish|finished|done|do|learn|learned"
            r"|learnt|complete|completed|cover|covered)\b",
            r"\bwhat am i (?:reading|studying|learning)\b",
            r"\bwhat do i (?:already )?know\b",
            r"\bmy (?:courses|reading list)\b",
            r"学习进度",
            r"进度",
            r"进展",
            r"学到哪(?:里|儿)?了?",
            r"读到哪(?:里|儿)?了?",
            r"(?:学|读|看)了(?:多少|哪些|什么)",
            r"完成了(?:多少|哪些|什么)",
            r"在(?:读|学|看)(?:什么|啥|哪些)",
            r"学习情况",
            r"学习状态",
        ),
    ),
    (
        RELATED,
        (
            r"\brelated\b(?:\s+(?:to|with))?",
            r"\bsimilar\b(?:\s+(?:to|with))?",
            r"\bconnected\s+(?:to|with)\b",
            r"\bgoes?\s+with\b",
            r"\bmore\s+(?:on|about|like)\b",
            r"\bsee also\b",
            r"\balongside\b",
            r"\blike\b",
            r"相关",
            r"有关",
            r"类似",
            r"相似",
            r"相近",
            r"关联",
            r"同类",
            r"延伸阅读",
            r"拓展阅读",
        ),
    ),
    (
        BEFORE,
        (
            r"\bbefore(?:\s+(?:reading|learning|studying|starting|tackling|diving into"
            r"|getting into|i (?:read|learn|study|start|tackle)))?\b",
            r"\bprior to\b",
            r"\b(?:reading |study |learning )?(?:plan|path|roadmap|route)"
            r"\s+(?:for|to|towards?|into)\b",
            r"\b(?:is|are)?\s*(?:the\s+)?pre-?req(?:uisite)?s?(?:\s+(?:of|for|to))?\b",
            r"之前",
            r"以前",
            r"前置(?:知识|要求|条件)?",
            r"先修(?:知识|课程)?",
            r"预备知识",
            r"基础知识",
            r"(?:哪些|什么|啥|哪方面的?)\s*基础(?!上)",
            r"基础(?:要求|储备)",
        ),
    ),
    (
        AFTER,
        (
            r"\bafter(?:\s+(?:reading|learning|studying|finishing|mastering|knowing|i (?:read|"
            r"learn|finish|know|understand)))?\b",
            r"(?:^|\b(?:now that|now|since|once|as|and|because|so)\s+)i(?: have|'ve| had|'d)?"
            r"(?: already| now| just)?\s+(?:know|understand|get|got|learned|learnt|finished|"
            r"mastered|read|studied|covered|done|am done with|'m done with)\b",
            r"\bonce i (?:know|understand|have (?:read|learned|learnt|finished))\b",
            r"\b(?:done|finished) with\b",
            r"\bbuilds? (?:up )?on\b",
            r"\b(?:what )?(?:comes|goes) (?:after|beyond)\b",
            r"\bbeyond\b",
            r"\bleads? to\b",
            r"\bgo (?:on )?from\b",
            r"之后",
            r"以后",
            r"(?:学|读|看)完了?",
            r"已经(?:学过|学会|学了|掌握|会|懂|读过|看过|读了|看了|了解)了?",
            r"(?:学|读|看)过了?(?!哪|什么|多少)",
            r"(?:懂|会|掌握)了",
            r"的?基础上",
            r"进阶",
        ),
    ),
    (NEXT, (r"\bnext\b", r"下一步", r"接下来", r"下一(?:个|篇|本)")),
    (
        NEXT,
        (
            r"\bready to (?:read|learn|study|start)\b",
            r"\b(?:read|learn|study|start) (?:right )?now\b",
            r"然后",
            r"现在",
        ),
    ),
    (
        BEFORE,
        (
            r"\b(?:need|needs|needed|required|requires?|requirements?)\b(?:\s+to\s+(?:know|read|"
            r"learn|study|understand|have))?(?:\s+(?:for|by|before|to (?:understand|read|learn|"
            r"follow|tackle)))?",
            r"\bdepends?\s+on\b",
            r"\bin order to (?:understand|read|learn|follow)\b",
            r"\bto (?:understand|follow|get to|tackle)\b",
            r"\b(?:prepare|ready) for\b",
            r"\b(?:background|foundations?|groundwork)\s+(?:for|of|on|to)\b",
            r"前(?=\s*(?:应该|应当|需要|要|得|该|先|读|学|看|补))",
            r"铺垫",
            r"打基础",
            r"先",
            r"\bget(?:ting)? started(?:\s+(?:with|on|in))?\b",
            r"\bwhere (?:do i|to|should i|can i) (?:start|begin)(?:\s+(?:with|on))?\b",
            r"\b(?:recommend|suggest)(?:ed)?\b",
            r"\b(?:good |best )?(?:readings?|resources?|reading list|papers?|articles?"
            r"|tutorials?|books?)\s+(?:on|about|for|to learn|covering)\b",
            r"推荐",
            r"(?:有)?(?:哪些|什么|啥)(?:好的)?(?:资料|文章|论文|材料|读物|教程|书)",
            r"入门",
            r"从哪(?:里|儿)?(?:开始|入手|学起|读起|看起)",
            r"(?:学习|阅读)?(?:资料|材料|读物)",
            r"的\s*(?:文章|论文|教程|书)$",
        ),
    ),
    (
        ABOUT,
        (
            r"^(?:so |and |but )?(?:what|who)(?:'s| is| are| was| does)\b(?:\s+(?:a|an|the)\b)?",
            r"\bexplain\b",
            r"\btell me (?:about|what)\b",
            r"\bwhat does (?:it|that)? ?mean\b",
            r"\bmeaning of\b",
            r"是什么(?:意思|东西)?",
            r"什么是",
            r"是啥",
            r"介绍(?:一下)?",
            r"解释(?:一下)?",
            r"讲讲",
            r"科普(?:一下)?",
        ),
    ),
)

#: Question words, verbs of reading and learning, and small words: set aside around the
#: target. English words match whole; Chinese ones anywhere at a part's edge.
FUNCTION_EN = frozenset(
    _words("""
what what's whats which where how who why when should shall would could can do does did i
me my we us our you your one to the a an is are am be been being there it its that this these
those of for on about with in into at by from and or first ever please tell show give list
any some need needs have has must ought go get start begin read reading learn learning study
studying know knowing understand understanding cover look looking into up things stuff
material materials topics papers docs documents want wanna let let's lets i'd i'm i've
should've gotta recommend suggest best good useful else more further also then so
step steps toward towards now today next already just started starting readings resources
reading-list something anything everything ones really actually well ok okay hey hi
""")
)
FUNCTION_ZH = tuple(
    sorted(
        _words("""
请问 请 帮我 告诉我 给我 推荐 一下 我们 我 你 大家 应该 应当 需要 必须 可以 能够 能 想要 想 要 得 该
学习 学会 阅读 了解 掌握 理解 弄懂 搞懂 入门 复习 研究 补充 补 学 读 看 懂
在 对于 对 关于 和 与 跟 同 什么 啥 哪些 哪个 哪篇 哪本 哪 怎么 如何 怎样
有哪些 有什么 有 是 的 了 呢 吗 吧 啊 呀 些 一些 东西
内容 资料 材料 文章 笔记 知识 好 最好 比较 还 再 都 就 才 去 来 会 做 现在 目前 今天
开始 准备 打算 计划 首先 正式 深入 系统地 系统 好好 已经 下一步 接下来 一下子 方面 相关的
"""),
        key=len,
        reverse=True,
    )
)
#: Verbs of reading and learning: a question with one of these and a target, but no
#: marker, asks for a reading plan ("how do I learn FSDP2").
READING_VERB = re.compile(
    r"\b(?:read|learn|study|understand|know|start|begin|tackle|get into|prepare)\b"
    r"|学|读|看|了解|掌握|理解|懂|入门|补"
)
QUESTION_WORD = re.compile(r"\b(?:what|which|how|where|should|can)\b|什么|啥|哪|怎么|如何|怎样")

EXAMPLES = (
    "what should I read before FSDP2",
    "prerequisites of flashattention",
    "FSDP2 之前应该读什么",
    "学习投机解码需要先看什么",
    "what should I learn after KV cache",
    "学完 DDP 之后学什么",
    "what should I read next",
    "下一步读什么",
    "related to KV cache",
    "和 KV cache 相关的内容",
    "what is PagedAttention",
    "how am I doing",
    "我的学习进度",
)


@dataclass(frozen=True)
class Question:
    """What a question asks: a command and, for ``before``/``after``/``related``/
    ``next``/``about``, its target."""

    command: str
    target: str | None = None
    typed: str | None = field(default=None, compare=False)
    """The leftover as typed, when the target is only part of it ("paged attention
    kernels" -> "paged attention"): a front end says what it read the question as."""


def parse(question: str, resolves: Callable[[str], bool] | None = None) -> Question:
    """Read ``question``; UsageError (with examples) when it is not understood or longer
    than :data:`MAX_CHARS`."""
    text = _normalize(question)
    if len(text) > MAX_CHARS:
        raise UsageError(
            f"that question is {len(text)} characters long; ask in at most {MAX_CHARS} "
            '(e.g. studykb ask "what should I read before FSDP2")'
        )
    folded = text.casefold()
    for command, patterns in MARKERS:
        spans = _spans(folded, patterns)
        if spans:
            return _checked(command, *_target(text, spans, resolves), resolves)
    target, typed = _target(text, [], resolves)
    if READING_VERB.search(folded) and (target or QUESTION_WORD.search(folded)):
        return _checked(BEFORE if target else NEXT, target, typed, resolves)
    raise _not_understood()


def _not_understood() -> UsageError:
    """Bad usage, with the questions understood: as a hint, and (``--json``) as the
    error's suggestions."""
    error = UsageError(
        "I don't know that question.",
        hint="I understand questions like:\n"
        + "\n".join(f'  studykb ask "{example}"' for example in EXAMPLES),
    )
    error.suggestions = list(EXAMPLES)  # type: ignore[attr-defined]  # for --json
    return error


def _checked(
    command: str, target: str | None, typed: str | None, resolves: Callable[[str], bool] | None
) -> Question:
    if command == STATUS:
        return Question(STATUS)
    if command == AFTER and not target:  # "I already know that, what now?": what is ready
        return Question(NEXT)
    if command == ABOUT and not (target and resolves is not None and resolves(target)):
        raise _not_understood()  # "what is the meaning": not a question about the notes
    if command in (BEFORE, RELATED) and not target:
        raise UsageError('which document? e.g. studykb ask "what should I read before FSDP2"')
    inside = bool(typed and target and typed.casefold() in target.casefold())
    return Question(command, target, None if inside else typed)


def _normalize(question: str) -> str:
    text = unicodedata.normalize("NFKC", question).replace("’", "'").replace("‘", "'")
    text = re.sub(r"[?？!！。.,，;；:：、~～…\"“”「」『』《》〈〉()（）\[\]]+", " ", text)
    text = re.sub(r"\b(?:i'd|i would|would) like to\b", "want to", text, flags=re.I)
    return " ".join(text.split())


def _spans(folded: str, patterns: Iterable[str]) -> list[tuple[int, int]]:
    """Where the markers are, left to right, none overlapping."""
    found: list[tuple[int, int]] = []
    for pattern in patterns:
        for m in re.finditer(pattern, folded):
            if m.end() > m.start() and not any(m.start() < e and s < m.end() for s, e in found):
                found.append((m.start(), m.end()))
    return sorted(found)


def _target(
    text: str, spans: list[tuple[int, int]], resolves: Callable[[str], bool] | None
) -> tuple[str | None, str | None]:
    """The target among the parts the markers leave, and the part as typed: the part
    after an English marker or before a Chinese one first; one that names a document,
    else the longest run of words in one that does, else the first with words."""
    parts, start = [], 0
    for s, e in (*spans, (len(text), len(text))):
        parts.append(text[start:s])
        start = e
    if spans:
        s, e = spans[0]
        first = 1 if text[s:e].isascii() else 0
        parts = [parts[first], parts[1 - first], *parts[2:]]
    kept = [(part, core) for part in parts if (core := _strip(part))]
    if not kept:
        return None, None
    if resolves is not None:
        named = next((core for _part, core in kept if resolves(core)), None)
        if named:
            return named, named
        for part, core in kept:
            inner = _longest_name(part, resolves)
            if inner:
                return inner, core
    return kept[0][1], kept[0][1]


def _strip(part: str) -> str:
    """``part`` without the question words, verbs and small words at its edges."""
    part = part.strip(" -'")
    while True:
        trimmed = _trim_tail(_trim_head(part)).strip(" -'")
        if trimmed == part:
            return part
        part = trimmed


def _trim_head(part: str) -> str:
    word = re.match(r"[A-Za-z']+(?!\w)", part)
    if word and word.group().casefold() in FUNCTION_EN:
        return part[word.end() :].lstrip()
    zh = next((w for w in FUNCTION_ZH if part.startswith(w)), "")
    return part[len(zh) :].lstrip()


def _trim_tail(part: str) -> str:
    word = re.search(r"(?<![\w'])[A-Za-z']+$", part)
    if word and word.group().casefold() in FUNCTION_EN:
        return part[: word.start()].rstrip()
    zh = next((w for w in FUNCTION_ZH if part.endswith(w)), "")
    return part[: len(part) - len(zh)].rstrip()


def runs(part: str) -> list[tuple[int, int]]:
    """Where a name may stand in ``part``: runs of at most :data:`MAX_PIECES` words (or
    Chinese characters), longest first, then leftmost. Linear in the length of ``part``:
    at most ``MAX_PIECES`` runs start at each piece."""
    pieces = [(m.start(), m.end()) for m in _PIECE.finditer(part)]
    out = [
        (pieces[i][0], pieces[j][1])
        for width in range(min(MAX_PIECES, len(pieces)), 0, -1)
        for i in range(len(pieces) - width + 1)
        for j in (i + width - 1,)
    ]
    return out


def _longest_name(part: str, resolves: Callable[[str], bool]) -> str | None:
    """The longest run of words (or Chinese characters) in ``part`` that names a document
    and is not only small words."""
    for a, b in runs(part):
        name = part[a:b].strip()
        if name and _strip(name) and resolves(name):
            return name
    return None


#: A word, a number or one Chinese character: where a name may start or end.
_PIECE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#/-]*|[^\x00-\x7f]")
#: The longest run of pieces tried as a name (a title of some twelve words).
MAX_PIECES = 12


def ask(vault: Vault, question: str) -> Question:
    """:func:`parse` with the vault's names: a target resolves when it is a name here, as
    written or loosely spelled."""
    # deferred: loads Stemmer, frontmatter, msgpack, yaml
    from studykb.vault.loose import Loose

    names = vault.names()
    loose: list[Loose] = []

    def resolves(name: str) -> bool:
        if names.resolve("", "", name, "name", "", False)[0] is not None:
            return True
        if not loose:  # built on the first name that is not written as such
            loose.append(Loose(vault))
        return loose[0].named(name) is not None

    return parse(question, resolves)
