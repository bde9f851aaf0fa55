"""``ask``: a question in English or Chinese, read as one of the plan commands.

A question is read by its parts, not matched against whole sentences:

* what it asks for, from the words that mark it: a prerequisite ("before",
  "prerequisites of", 之前, 前置, 先), what is ready next ("next", 下一步, 接下来),
  related reading ("related to", "similar to", 相关, 类似) or progress ("progress",
  "how am I doing", 进度, 学到哪);
* question words, verbs of reading and learning, and the small words around them (what,
  should, I, read, 什么, 应该, 学习, 看...), which are set aside;
* the target: what is left, resolved like a reference. With ``resolves`` (does this name
  a document?), a leftover that names nothing is searched for the longest part that does,
  so a target that contains a small word ("Learn the Basics") is still found.

A question with no reading verb and nothing that marks what it asks is not understood.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from studykb.errors import UsageError

BEFORE, NEXT, RELATED, STATUS = "before", "next", "related", "status"


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
    (NEXT, (r"\bnext\b", r"下一步", r"接下来", r"下一(?:个|篇|本)")),
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
        ),
    ),
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
step steps toward towards now today
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
    "what should I read next",
    "下一步读什么",
    "related to KV cache",
    "和 KV cache 相关的内容",
    "how am I doing",
    "我的学习进度",
)


@dataclass(frozen=True)
class Question:
    """What a question asks: a command and, for ``before``/``related``/``next``, its target."""

    command: str
    target: str | None = None


def parse(question: str, resolves: Callable[[str], bool] | None = None) -> Question:
    """Read ``question``; UsageError (with examples) when it is not understood."""
    text = _normalize(question)
    folded = text.casefold()
    for command, patterns in MARKERS:
        spans = _spans(folded, patterns)
        if spans:
            return _checked(command, _target(text, spans, resolves))
    target = _target(text, [], resolves)
    if READING_VERB.search(folded) and (target or QUESTION_WORD.search(folded)):
        return _checked(BEFORE if target else NEXT, target)
    raise UsageError(
        "I don't know that question. I understand questions like:\n"
        + "\n".join(f'  studykb ask "{example}"' for example in EXAMPLES)
    )


def _checked(command: str, target: str | None) -> Question:
    if command == STATUS:
        return Question(STATUS)
    if command in (BEFORE, RELATED) and not target:
        raise UsageError('which document? e.g. studykb ask "what should I read before FSDP2"')
    return Question(command, target)


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
) -> str | None:
    """The target among the parts the markers leave: the part after an English marker or
    before a Chinese one first; one that names a document, else the first with words."""
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
        return None
    if resolves is not None:
        named = next((core for _part, core in kept if resolves(core)), None)
        named = named or next(
            (n for part, _c in kept if (n := _longest_name(part, resolves))), None
        )
        if named:
            return named
    return kept[0][1]


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


def _longest_name(part: str, resolves: Callable[[str], bool]) -> str | None:
    """The longest run of words (or Chinese characters) in ``part`` that names a document
    and is not only small words."""
    cuts = sorted(
        {
            0,
            len(part),
            *(m.start() for m in _PIECE.finditer(part)),
            *(m.end() for m in _PIECE.finditer(part)),
        }
    )
    spans = sorted(
        ((a, b) for i, a in enumerate(cuts) for b in cuts[i + 1 :]), key=lambda ab: ab[0] - ab[1]
    )
    for a, b in spans[:MAX_SPANS]:
        name = part[a:b].strip()
        if name and _strip(name) and resolves(name):
            return name
    return None


#: A word, a number or one Chinese character: where a name may start or end.
_PIECE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#/-]*|[^\x00-\x7f]")
#: At most this many runs are tried (a question of some 40 words or characters).
MAX_SPANS = 1000
