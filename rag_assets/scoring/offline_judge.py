"""The offline judge: deterministic heuristics answering the judge templates without a model.

All functions read text the same way. Normalisation: "single sign-on" -> "sso", "up to" -> "maximum",
number words -> digits, "1,200" -> "1200", "15GB" -> "15 GB", "an hour" -> "1 hour". Content words:
stopwords out, light suffix stripping cut to six letters, a few synonyms ("biggest" -> "maximum",
"computer" -> "device"). Quantities: a number with its unit (durations in seconds, so "60 minutes" ==
"1 hour"; prices, sizes, percentages, dates, product versions kept apart) and the words around it (its
role). Specific tokens: code, paths, flags, identifiers. Names: capitalised words inside a sentence.
A chunk is read as units: sentences, bullet and code lines, table rows, and table cells, each cell with
its row label and column header (a column headed "2.0" scopes its values to version 2.0); and as
clauses, for polarity (negated or not, and what the negation bears on).

- faithfulness: the answer's sentences (citation markers stripped; declines, hedges and pleasantries
  dropped) are the claims. A claim speaks of the product versions it names, else of those the question
  names; chunks of another version only count if they name the wanted one. It is grounded in a chunk
  when: most of its content words (identifiers count double) are in the chunk, and a third of them in
  one unit; every clause and every list item is covered as well; each quantity is the value the chunk
  gives for the quantity's role (the best matching unit states it, not a different value of the same
  kind: another plan's, row's or version's value); every identifier and name is in the chunk, a name
  in a unit that matches the claim at least as well as units naming something else instead; no chunk
  clause that matches it states the opposite (a negation bearing on the same words, or an antonym);
  and, for a claim without values, the sentence that matches it best is not one about another version.
  A claim that mixes facts of several chunks is grounded when each of its clauses is. Otherwise:
  inconsistency (a unit about the same subject gives another value, the value is another version's,
  or the chunks say the opposite), fabrication (a number, identifier or name found in no chunk), or
  out_of_context (unsupported).
- answer_questions: the answer's factual sentences, split into three groups (so that sentences about
  other topics pull their question away from the one asked), each turned into a question by replacing
  the values it gives with the words that ask for them ("every 15 minutes" -> "how often"); noncommittal
  when no sentence states a fact: only declines, hedges, pointers elsewhere or placeholders ("you can
  do this in the settings").
- reference_statements: sentences, split at semicolons and at ", and" between two full statements.
- context_precision: a chunk is useful when it supports a statement of the reference answer (its words,
  its quantities for the same role and its identifiers; the question's words count a fifth) nearly as
  well as the best chunk does, and neither contradicts its values nor says the opposite.
- context_recall: a statement is attributed to the chunk holding most of its words and all its
  quantities and identifiers.

Everything is deterministic (no set iteration order reaches an output), with no network and no model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from rag_assets.text.tokens import STOPWORDS

# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------

_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), r) for p, r in (
    (r"\bsingle[\s-]+sign[\s-]*on\b", "SSO"),
    (r"\b(?:multi|two|2)[\s-]*factor(?:\s+authentication)?\b", "MFA"),
    (r"\bsecond factor\b", "MFA"),
    (r"\bup to\b", "maximum"),
    (r"\bat most\b", "maximum"),
    (r"\bno more than\b", "maximum"),
    (r"\bat least\b", "minimum"),
    (r"\bno less than\b", "minimum"),
    (r"\b(?:sign|log)(?:s|ed|ing)?[\s-]+(?:in|on)\b", "signin"),
    (r"\blogin\b", "signin"),
    (r"\btime[\s-]+out\b", "timeout"),
    (r"\bper cent\b|\bpercent\b", "%"),
    (r"\b(?:an|a|one) (second|minute|hour|day|week|month|year)\b", r"1 \1"),
    (r"\bhalf an hour\b", "30 minutes"),
    (r"\b(?:every|each) (?:day|night)\b|\bnightly\b", "daily"),
))

_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Synonyms and irregular forms, mapped before suffix stripping (whole lowercase words).
_SYNONYMS = {
    "largest": "maximum", "biggest": "maximum", "max": "maximum", "highest": "maximum", "maximal": "maximum",
    "ceiling": "maximum", "limit": "maximum", "limits": "maximum", "cap": "maximum", "caps": "maximum",
    "capped": "maximum", "limited": "maximum", "smallest": "minimum", "lowest": "minimum", "min": "minimum",
    "cost": "price", "costs": "price", "priced": "price", "pricing": "price", "prices": "price", "fee": "price",
    "fees": "price", "charged": "price", "kept": "keep", "keeps": "keep", "keeping": "keep", "retain": "keep",
    "retains": "keep", "retained": "keep", "preserve": "keep", "preserved": "keep", "preserves": "keep",
    "hold": "keep", "holds": "keep", "held": "keep", "stored": "keep", "store": "keep", "stores": "keep",
    "removed": "remove", "removes": "remove", "removal": "remove", "dropped": "remove", "drop": "remove",
    "discontinued": "remove", "retired": "remove", "eliminated": "remove", "gone": "remove",
    "computer": "device", "computers": "device", "machine": "device", "machines": "device",
    "person": "user", "people": "user", "member": "user", "members": "user", "seat": "user", "seats": "user",
    "admin": "administrator", "admins": "administrator", "administrators": "administrator",
    "expiry": "expire", "expiration": "expire", "expires": "expire", "expired": "expire", "lapse": "expire",
    "lifetime": "expire", "valid": "expire",
    "need": "require", "needs": "require", "needed": "require", "required": "require", "requires": "require",
    "requirement": "require", "requirements": "require", "must": "require",
    "permitted": "allow", "permits": "allow", "allowed": "allow", "allows": "allow", "lets": "allow",
    "reattempt": "retry", "retried": "retry", "retries": "retry", "retrying": "retry",
    "calls": "request", "call": "request",
    "synchronisation": "sync", "synchronization": "sync", "synchronise": "sync", "synchronize": "sync",
    "synced": "sync", "syncs": "sync", "syncing": "sync", "became": "become", "becomes": "become",
    "raised": "increase", "raise": "increase", "increased": "increase", "higher": "increase",
    "bumped": "increase", "grew": "increase", "lowered": "decrease", "reduced": "decrease",
    "shortened": "decrease", "shorten": "decrease", "lower": "decrease", "reduce": "decrease",
    "encrypts": "encrypt", "encrypted": "encrypt", "encryption": "encrypt", "cipher": "encrypt",
    "ciphers": "encrypt", "enciphered": "encrypt",
    "gigabytes": "gb", "gigabyte": "gb", "terabytes": "tb", "terabyte": "tb", "megabytes": "mb",
    "megabyte": "mb", "kilobytes": "kb", "kilobyte": "kb",
    "secs": "second", "sec": "second", "mins": "minute", "hrs": "hour", "hr": "hour",
    "interval": "every", "frequency": "every", "often": "every",  # "how often": no checkable content
    "credentials": "credential", "passwords": "password",
    "deleted": "delete", "deletes": "delete", "deleting": "delete", "deletion": "delete", "erase": "delete",
    "erased": "delete", "purged": "purge", "purges": "purge", "purging": "purge",
    "defaults": "default", "standard": "default",
    "begins": "start", "begin": "start", "started": "start",
    "allowance": "quota", "revocation": "revoke", "revoked": "revoke",
    "revokes": "revoke", "revoking": "revoke",
}

# Words that say nothing checkable: the product's name, talk about the documentation itself.
_OPTIONAL = frozenset({"kestrel", "hub", "documentation", "docs", "doc", "according", "mention", "mentioned", "state",
                       "states", "stated", "say", "says", "note", "noted", "answer", "question", "product",
                       "version", "versions", "release", "specifically", "exactly", "precisely"})
_EXTRA_STOP = frozenset("""
also just actually currently basically simply really however therefore thus overall generally
typically usually every whole yes ok okay please thanks thank well even still already yet etc eg ie
get gets got make makes made go goes like many much way ways thing things lot lots something anything
everything nothing within via around among across along toward towards onto upon whether whatever
whichever whoever need another come comes came coming happen happens happened seem seems quite rather
""".split())
_STOP = STOPWORDS | _EXTRA_STOP | frozenset({"cannot", "none", "nothing", "neither", "nobody", "never", "without"})

_NEGATIONS = frozenset({"not", "no", "never", "cannot", "none", "nothing", "neither", "nor", "nobody", "without",
                        "disabled", "removed", "stop", "stops", "stopped", "prevent", "prevents", "prevented",
                        "refused", "rejected", "exempt", "impossible", "prohibited", "forbidden", "disallowed",
                        "excluded", "absent"})
_UN_NOT_NEGATIONS = frozenset({"unlinked", "uninstalled", "unpinned", "unlocked", "unpacked", "unzipped", "under",
                               "understand", "understood", "unified", "united", "unmounted"})

_TIME_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000,
               "year": 31536000, "ms": 0.001, "millisecond": 0.001}
_UNITS = {
    "s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "gb": "gb", "gigabyte": "gb", "gigabytes": "gb", "tb": "tb", "terabyte": "tb", "terabytes": "tb",
    "mb": "mb", "megabyte": "mb", "megabytes": "mb", "kb": "kb", "kilobyte": "kb", "kilobytes": "kb",
    "kb/s": "kb/s", "kbps": "kb/s", "mbit/s": "mbit/s", "mbps": "mbit/s", "%": "%",
    "usd": "usd", "dollar": "usd", "dollars": "usd", "character": "character", "characters": "character",
    "byte": "byte", "bytes": "byte", "vcpu": "vcpu", "times": "times", "x": "times",
}
_MONTHS = frozenset("january february march april may june july august september october november december "
                    "jan feb mar apr jun jul aug sep sept oct nov dec".split())
_MULTIPLIERS = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

_NUMBER = re.compile(
    r"(?<![\w.])(?P<dollar>\$\s?)?(?P<num>\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
    r"(?P<tail>[A-Za-z]*)"
)
_AFTER_NUMBER = re.compile(r"\s*(?:-\s*)?(?P<unit>%|[A-Za-z]+(?:/s)?)")
_VERSION_SHAPE = re.compile(r"^\d\.\d$")
_NOT_PRODUCT_BEFORE = frozenset({"oauth", "saml", "tls", "kmip", "http", "https", "ssl", "python", "openid",
                                 "connect", "smb", "ipv", "php", "java"})
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'[a-z]+)?|\d+[A-Za-z][A-Za-z0-9]*")
_SPECIFIC = re.compile(r"`([^`\n]{2,80})`"                      # code
                       r"|(?<![\w-])(--[a-z][a-z0-9-]+)"          # a command-line flag
                       r"|(?<![\w./~-])((?:[~/.]?[A-Za-z0-9]+)(?:[._/:~-]+[A-Za-z0-9*{}]+)+)")  # paths, ids
_CITATION = re.compile(r"\s*\[(?:[0-9a-f]{6,}|[A-Za-z]*chunk[^\]\s]*|\d{1,2})\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`*])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+|>\s*)")
_VERB_AFTER_AND = ("is|are|was|were|can|cannot|will|must|may|should|has|have|does|do|keeps|deletes|removes|uses|runs|"
                   "becomes|stays|returns|shows|sends|creates|takes|gets|needs|requires|supports|allows|offers|"
                   "includes|adds|stores|retries|rotates|expires|applies|works|lists|moves|unlinks|suspends|"
                   "re-encrypts|prints|fails|opens|downloads|uploads|gives|replaces|counts|lasts|lets|goes|went|"
                   "raised|rose|changed|became|kept|moved|got|had|did|then|no|not|nobody|never|none|nothing")
_CLAUSE_SPLIT = re.compile(r";|,\s+(?:but|while|whereas|although|though|so|because|unless|except|which|where)\b"
                           r"|\s+but\s+|,\s+(?=(?:not|never|no)\b)|\s+-{1,2}\s+|\s+–\s+|:\s+"
                           r"|,?\s+and\s+(?:\w+ly\s+)?(?=(?:" + _VERB_AFTER_AND + r")\b)|,\s+(?:and|or)\s+")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    word = word.strip("'")
    word = _SYNONYMS.get(word, word)
    if len(word) <= 3 or any(ch.isdigit() for ch in word):
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)] + replacement
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
            word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith(("ation", "ition")) and len(word) > 7:
        word = word[:-3]
    elif word.endswith("ion") and len(word) > 6 and word[-4] in "st":
        word = word[:-3]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    word = _SYNONYMS.get(word, word)
    if word.endswith("ity") and len(word) > 7:
        return word[:6] + "ty"  # "availability" is not "available"
    return word[:6]


def _normalise(text: str) -> str:
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-").replace("—", " - ")
    text = text.replace("**", "").replace("→", " to ")
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    text = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS[m.group(1).lower()]), text)
    text = re.sub(r"\b(\d+)-(second|minute|hour|day|week|month|year)\b", r"\1 \2", text, flags=re.IGNORECASE)
    return text


def _words(text: str) -> list[str]:
    """Stemmed content words of (normalised) text, in order, numbers left out."""
    out = []
    for token in _WORD.findall(text):
        low = token.lower()
        if low in _STOP or low in _OPTIONAL or (len(low) < 2 and low != "%"):
            continue
        if re.fullmatch(r"\d+(?:gb|tb|mb|kb|ms|s|h|m)", low):
            continue
        if _is_un_word(low):
            low = low[2:]
        stem = _stem(low)
        if stem in _STOP or stem in _OPTIONAL or len(stem) < 2:
            continue
        out.append(stem)
    return out


@dataclass(frozen=True)
class Quantity:
    value: str
    unit: str | None      # canonical unit, "time" for durations (value in seconds), None for a bare number
    raw: str
    context: frozenset[str] = field(default=frozenset(), compare=False)  # the words around it: its role

    def matches(self, other: Quantity) -> bool:
        """Same value, and the same unit where both give one ("15 GB" == "15GB", "60 minutes" == "1 hour",
        "60 days" matches a bare "60"); a price only matches a price ("$18" is not "18 users")."""
        if self.value != other.value:
            return False
        if self.unit == other.unit:
            return True
        if "usd" in (self.unit, other.unit):
            return False
        return self.unit is None or other.unit is None


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}".rstrip("0")


def _quantities(text: str) -> tuple[list[Quantity], list[tuple[int, str]]]:
    """Quantities of normalised text, and the product-version-shaped numbers with their offsets."""
    out: list[Quantity] = []
    version_like: list[tuple[int, str]] = []
    for match in _NUMBER.finditer(text):
        tail = match.group("tail")
        raw = match.group("num")
        if tail and re.match(r"[A-Za-z]+\d", text[match.start("tail"):match.start("tail") + len(tail) + 1]):
            continue  # an identifier such as 22H2
        if tail and tail.lower() not in _UNITS and tail.lower() not in _MULTIPLIERS and tail.lower() not in ("x",):
            if not re.fullmatch(r"(?:st|nd|rd|th)", tail.lower()):
                continue  # 1a2b: part of an identifier
        value_text = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw) else raw
        unit_word = tail.lower() if tail else None
        rest = text[match.end():]
        if unit_word is None:
            after = _AFTER_NUMBER.match(rest)
            if after:
                unit_word = after.group("unit").lower()
                rest = rest[after.end():]
        multiplier = 1
        if unit_word in _MULTIPLIERS:
            multiplier = _MULTIPLIERS[unit_word]
            after = _AFTER_NUMBER.match(rest)
            unit_word = after.group("unit").lower() if after else None
        unit = _UNITS.get(unit_word) if unit_word else None
        if unit_word in _MONTHS and not re.fullmatch(r"\d{4}", raw):
            unit = "date"
        if match.group("dollar"):
            unit = "usd"
        if re.fullmatch(r"\d+(?:\.\d+)?", value_text):
            number = float(value_text) * multiplier
            if unit in _TIME_UNITS:
                value, unit = _fmt(number * _TIME_UNITS[unit]), "time"
            elif multiplier != 1:
                value = _fmt(number)
            else:
                value = value_text
        else:
            value = value_text
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value_text):
            unit = "date"
        elif re.fullmatch(r"\d{1,2}:\d{2}", value_text):
            unit = "clock"
        if _VERSION_SHAPE.match(value_text) and unit is None:
            before = re.findall(r"[A-Za-z]+", text[max(0, match.start() - 12):match.start()])
            after_name = before and before[-1].lower() in _NOT_PRODUCT_BEFORE  # OAuth 2.0, TLS 1.3
            if not after_name and not text[:match.start()].lower().endswith("pre-"):
                version_like.append((match.start(), value_text))
                unit = "version"
        before = re.split(r"[.;:|()\n,]", text[max(0, match.start() - 80):match.start()])[-1]
        after = re.split(r"[.;:|()\n,]", text[match.end():match.end() + 80])[0]
        context = [*_WORD.findall(before)[-4:], *_WORD.findall(after)[:4]]
        out.append(Quantity(value, unit, raw, frozenset(w for t in context for w in _words(t))))
    return out, version_like


def _specifics(text: str) -> list[str]:
    """Identifiers, paths, code and file names, lowercased, as they must appear in a source."""
    out = []
    for match in _SPECIFIC.finditer(text):
        token = (match.group(1) or match.group(2) or match.group(3) or "").strip().strip(".,;:").lower()
        if not token:
            continue
        if match.group(3):
            parts = [p for p in re.split(r"[._/:~-]+", token) if p]
            has_digit = any(ch.isdigit() for ch in token)
            codey = "_" in token or "/" in token or "~" in token or (
                "." in token and all(len(p) >= 2 for p in parts) and not re.fullmatch(r"[\d.]+", token))
            if not (has_digit or codey) or re.fullmatch(r"[\d.,:-]+", token):
                continue
            if has_digit and not codey and re.fullmatch(r"[a-z]+-\d+(?:-[a-z]+)?|\d+-[a-z]+", token):
                # KS-413, AES-256, 60-second: compare by words and numbers, not as one string
                continue
        out.append(re.sub(r"\s+", " ", token))
    return out


_NAMED_EXEMPT = frozenset("""
i yes no none all unlimited optional required note also however then if in on for the a an this that these it
you your we our they kestrel sync ok and or but so to with by
""".split())


def _named(sentence: str, first: bool = False) -> list[str]:
    """Capitalised words inside a sentence (not its first word unless ``first``): names of products,
    plans, places."""
    tokens = re.findall(r"[A-Za-z][A-Za-z0-9']*", re.sub(r"`[^`]*`", " ", sentence))
    out = []
    for position, token in enumerate(tokens):
        if (position == 0 and not first) or not token[0].isupper() or token.lower() in _NAMED_EXEMPT:
            continue
        if len(token) <= 1 or any(ch.isdigit() for ch in token):
            continue
        low = token.lower().split("'")[0]
        if low in _UNITS or low in _OPTIONAL or low in _STOP:
            continue
        stem = _stem(low)
        if stem and stem not in _STOP and stem not in _OPTIONAL:
            out.append(stem)
    return out


# --------------------------------------------------------------------------------------------
# Analysed text
# --------------------------------------------------------------------------------------------

_UNIT_STEMS = frozenset(_stem(k) for k in (*_UNITS, *_TIME_UNITS) if k not in ("times", "x"))


@dataclass(frozen=True)
class Unit:
    """A sentence, line or table cell: the span inside which a fact is stated."""

    text: str
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    versions: frozenset[str]   # product versions the unit names (or its table column is about)
    negated: bool
    negation_scope: frozenset[str]
    named: frozenset[str]      # capitalised words inside it
    row: bool = False          # a whole table row (its cells are units of their own)
    keys: int | None = None    # a table cell: its first quantities are the row's and column's, not values

    @property
    def values(self) -> tuple[Quantity, ...]:
        """The values it states (a cell's own, not those of its row label)."""
        return self.quantities if self.keys is None else self.quantities[self.keys:]

    @property
    def key_values(self) -> tuple[Quantity, ...]:
        """The values that say what it is about (a cell's row label; any value of a sentence)."""
        return self.quantities if self.keys is None else self.quantities[:self.keys]

    @property
    def terms(self) -> frozenset[str]:
        """Its words and its values ("#7443"): what two clauses are compared on."""
        return self.words | {f"#{q.value}" for q in self.quantities}


_PRE_NEGATIONS = frozenset({"not", "no", "never", "cannot", "none", "nothing", "neither", "nor", "nobody", "without"})


def _is_un_word(token: str) -> bool:
    """"unchanged", "unavailable": a negated participle or adjective."""
    return (token.startswith("un") and token.endswith(("ed", "able")) and len(token) > 6
            and token not in _UN_NOT_NEGATIONS)


def _negation(text: str) -> tuple[bool, frozenset[str]]:
    """Whether the text is negated (an odd number of negations: "without changes, no snapshot" is not;
    "does not expire unless X" is not either), and the words the negations bear on: the words of the
    clause before and after "not", "no"... (only after "without"); around a negative verb ("removed",
    "stopped", "unchanged"). A negation followed by no content word ("cannot use it") is not counted:
    what it negates is said elsewhere."""
    tokens = re.findall(r"[a-z][a-z0-9'-]*|[.,;:()!?]", text.lower())
    scope: list[str] = []
    count = 0
    unless = False
    for i, token in enumerate(tokens):
        if token == "unless":
            unless = True
            continue
        pre = token in _PRE_NEGATIONS or token.endswith("n't")
        verb = not pre and (token in _NEGATIONS or _is_un_word(token))
        if not (pre or verb) or (token == "not" and tokens[i + 1:i + 2] == ["only"]):
            continue
        after = []
        for word in tokens[i + 1:i + (6 if pre else 4)]:
            if word in ".,;:()!?":
                break
            after.append(word)
        if pre and not any(_words(w) for w in after):
            continue
        count += 1
        before = []
        if verb or token != "without":
            for word in reversed(tokens[max(0, i - 4):i]):
                if word in ".,;:()!?":
                    break
                before.append(word)
        for word in (*before, token, *after):
            scope.extend(_words(word))
    return count % 2 == 1 and not unless, frozenset(scope)


def _versions_in(text: str) -> frozenset[str]:
    """Product versions a text names ("in 2.0", "the 1.6 agent"); not "OAuth 2.0" or "TLS 1.3"."""
    return frozenset(v for _, v in _quantities(text)[1])


def _unit(text: str, scope: frozenset[str] = frozenset(), row: bool = False, value: str | None = None,
          negated: bool | None = None, cell: str | None = None) -> Unit:
    """``value``: the unit is a table cell read with its labels (``text`` ends with the ``cell``); its
    names and negation are the value's. ``negated``: the polarity is known (an FAQ's short answer)."""
    norm = _normalise(text)
    quantities, _ = _quantities(norm)
    keys = max(0, len(quantities) - len(_quantities(_normalise(cell))[0])) if cell is not None else None
    if value is not None:
        negated = _negation(_normalise(value))[0] if negated is None else negated
        negation = (negated, frozenset(_words(norm)) if negated else frozenset())
        named = frozenset()  # title-case labels and headers are not names
    else:
        negation = _negation(norm)
        named = frozenset(_named(norm))
    if negated is not None and value is None:
        negation = (negated, frozenset(_words(norm)) if negated else frozenset())
    return Unit(text, frozenset(_words(norm)), tuple(quantities), _versions_in(norm) | scope, negation[0],
                negation[1], named, row, keys)


def _polarity_parts(sentence: str) -> list[str]:
    """Clauses, a clause that is a list of three items or more cut into its items: the spans a negation
    is read in ("0 success, 1 error, 4 Hub unreachable" is a list, not one negated statement)."""
    out = []
    for clause in _clauses(sentence):
        items = [p.strip() for p in clause.split(", ") if len(p.strip()) > 1]
        listed = len(items) >= 4 or (len(items) == 3 and re.match(r"(?:and|or)\s", items[-1]))
        out.extend(items if listed else [clause])
    return out


def _clauses(sentence: str) -> list[str]:
    parts = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(sentence) if p]
    return [p for p in parts if len(re.findall(r"[A-Za-z]{2,}", p)) >= 1]


def _table_cells(line: str) -> list[str]:
    return [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]


def _is_separator(line: str) -> bool:
    return bool(re.fullmatch(r"[\s|:-]+", line)) and "-" in line


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    version: str | None
    text_low: str               # normalised, lowercased, whitespace collapsed (for specific tokens)
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    units: tuple[Unit, ...]     # sentences, lines, table rows and table cells
    clauses: tuple[Unit, ...]   # sentences split at clause boundaries, and table cells (for polarity)
    versions: frozenset[str]    # product versions the chunk is about (metadata and mentions)

    def scope(self, unit: Unit) -> frozenset[str]:
        """The versions a unit speaks of: the ones it names, else the chunk's own."""
        return unit.versions or (frozenset({self.version}) if self.version else frozenset())


def _prose_units(line: str) -> list[str]:
    cleaned = _MARKUP.sub("", line).replace("`", "").replace("**", "").strip()
    return [s.strip() for s in _SENTENCE_END.split(cleaned) if len(s.strip()) > 1]


@lru_cache(maxsize=4096)
def _chunk(chunk_id: str, text: str, version: str | None) -> Chunk:
    norm = _normalise(text)
    units: list[Unit] = []
    clauses: list[Unit] = []
    header: list[str] | None = None
    header_scopes: list[frozenset[str]] = []
    in_fence = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not line:
            continue
        if in_fence:
            units.append(_unit(line))
            continue
        if line.startswith("|") or (line.count("|") >= 2 and not line.startswith(("-", "*"))):
            if _is_separator(line):
                continue
            cells = _table_cells(line)
            if header is None:
                header = cells
                header_scopes = [_versions_in(_normalise(h)) for h in cells]  # "1.6", "Now (2.0)"
                continue
            label = cells[0] if cells else ""
            scoped = any(header_scopes[1:])
            units.append(_unit(" ".join(cells), frozenset().union(*header_scopes) if scoped else frozenset(), row=True))
            for j, cell in enumerate(cells[1:], start=1):
                head = header[j] if j < len(header) else ""
                scope = header_scopes[j] if j < len(header_scopes) else frozenset()
                negative = bool(re.match(r"(?i)(?:no|none|not\b.*|never|n/a|-|—)\s*(?:\(.*)?$", cell.strip()))
                cell_unit = _unit(f"{header[0]} {label} {head} {cell}", scope, value=f"{head} {cell}",
                                  negated=True if negative else None, cell=cell)
                units.append(cell_unit)
                clauses.append(cell_unit)
            continue
        header = None
        if re.match(r"^#{1,6}\s", line):
            units.append(_unit(re.sub(r"^#{1,6}\s+", "", line)))
            continue
        prose = _prose_units(line)
        for index, sentence in enumerate(prose):
            units.append(_unit(sentence))
            if sentence.endswith("?"):
                # a question asserts nothing; read it with a short answer that follows ("Not in 2.0.")
                answer = prose[index + 1] if index + 1 < len(prose) else ""
                reply = re.match(r"(?i)(yes|no|not)\b", answer)
                if reply:
                    clauses.append(_unit(f"{sentence} {answer}", negated=reply.group(1).lower() != "yes"))
                continue
            clauses.extend(_unit(p) for p in _polarity_parts(sentence))
    quantities, _ = _quantities(norm)
    versions = _versions_in(norm) | ({version} if version else frozenset())
    return Chunk(chunk_id, version, re.sub(r"\s+", " ", norm.replace("`", "").lower()),
                 frozenset(_words(norm)), tuple(quantities), tuple(units), tuple(clauses), frozenset(versions))


def _chunks(inputs: Mapping[str, Any]) -> list[Chunk]:
    return [_chunk(str(c["chunk_id"]), str(c.get("text") or ""), str(c["version"]) if c.get("version") else None)
            for c in inputs.get("chunks") or []]


def _strip_citations(text: str, chunk_ids: Iterable[str] = ()) -> str:
    """The text without its citation markers ("[3f2a9c1e0b7d4e5f]"); a marker ends a sentence, since the
    reference system cites after each sentence it quotes, whatever its punctuation."""
    for chunk_id in chunk_ids:
        if chunk_id:
            text = text.replace(f"[{chunk_id}]", "\n")
    return _CITATION.sub("\n", text)


def _split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip() or line.strip().startswith(("```", "~~~")) or _is_separator(line.strip()):
            continue
        if line.strip().startswith("|"):
            out.append(" ".join(_table_cells(line)))
            continue
        cleaned = _MARKUP.sub("", line).replace("**", "").strip()
        for sentence in _SENTENCE_END.split(cleaned):
            for part in sentence.split(";"):
                part = part.strip()
                if len(re.findall(r"[A-Za-z0-9]", part)) >= 2:
                    out.append(part)
    return out


# --------------------------------------------------------------------------------------------
# Claims: what an answer's sentence states
# --------------------------------------------------------------------------------------------

_DECLINE = re.compile(
    r"\b(?:cannot|can't|can ?not|unable to|not able to|won't be able to)\b[^.]{0,60}?\b(?:answer|say|tell|determine|"
    r"find|help|provide|confirm|know|respond)\b"
    r"|\b(?:does|do|did)(?: not|n't) (?:cover|mention|say|specify|contain|include|provide|describe|address|state|"
    r"document)"
    r"|\b(?:no|not enough|insufficient|no specific|limited) (?:information|details|data|context|documentation)\b"
    r"|\b(?:do not|don't|does not|doesn't|did not|didn't) (?:have|contain|include|provide) (?:enough|sufficient|any)\b"
    r"|\bi (?:do not|don't|am not|'m not) (?:know|sure|certain|aware)"
    r"|\b(?:not sure|unsure|uncertain|no idea|hard to say|difficult to say|impossible to say|not clear|unclear)\b"
    r"|\bit (?:really )?depends\b|\bdepends on (?:many|several|various|a number of|your|the|how|what|which)\b"
    r"|\b(?:varies|may vary|can vary|could vary)\b"
    r"|\bnot (?:covered|documented|mentioned|specified|stated|described)\b"
    r"|\bcould not find\b|\bcouldn't find\b|\bnot in the (?:documentation|context|provided)",
    re.IGNORECASE)
_POINTER = re.compile(
    r"\b(?:contact|reach out to|ask|email|call) (?:your |the |an? )?(?:support|sales|administrator|admin|account|"
    r"kestrel|it department|vendor|customer success|team)"
    r"|\b(?:refer|see|check|consult|look at|read|visit|review|follow)\b[^.]{0,40}\b(?:documentation|docs|guide|page|"
    r"manual|section|website|help center|knowledge base|faq|release notes|reference|article)\b"
    r"|\bfor (?:more|further|additional) (?:details|information|info)\b"
    r"|\b(?:hope this helps|let me know|feel free)\b",
    re.IGNORECASE)
_META_WORDS = frozenset(_stem(w) for w in (
    "know let hope help helps need anything else question questions feel free happy sure check details detail "
    "information info contact support refer see consult documentation docs guide page answer provided context "
    "depend depends vary varies exact exactly specific specifics case situation circumstances ask team reach able "
    "find found say tell recommend sales various factors unfortunately sorry cannot clear unclear certain idea "
    "follow steps quote contract").split())


@dataclass(frozen=True)
class Claim:
    text: str
    words: tuple[str, ...]                  # stemmed content words, in order, without duplicates
    named: tuple[str, ...]                  # capitalised words inside the sentence
    specifics: tuple[str, ...]              # identifiers, paths, code
    quantities: tuple[Quantity, ...]        # numbers with units (product versions excluded)
    subjects: tuple[tuple[str, ...], ...]   # per quantity: the words of its clause
    versions: tuple[str, ...]               # product versions the claim names
    clauses: tuple[Unit, ...]
    acronyms: tuple[str, ...] = ()          # the names written in capitals (CLI, CSV)
    parts: tuple[Unit, ...] = ()            # the clauses cut at commas, for polarity


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


_PARTICLE = re.compile(r"^\s*(?:yes|no|sure|okay|ok|right|correct|indeed)\b\s*[,.!:;-]\s*", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _claim(sentence: str) -> Claim:
    text = sentence
    sentence = _PARTICLE.sub("", sentence) or sentence  # "No, X does not..." states that X does not
    norm = _normalise(sentence)
    quantities, version_like = _quantities(norm)
    versions = _unique(v for _, v in version_like)
    words = _unique(_words(norm))
    parts = [_unit(p) for p in _clauses(sentence)] or [_unit(sentence)]
    kept, subjects = [], []
    for quantity in quantities:
        if quantity.unit == "version":
            continue
        kept.append(quantity)
        clause = next((p for p in parts if quantity in p.quantities), None)
        subjects.append(tuple(sorted(clause.words)) if clause else words)
    acronyms = _unique(_stem(t.lower()) for t in re.findall(r"\b[A-Z][A-Z0-9]+s?\b", norm))
    return Claim(text, words, _unique(_named(norm)), _unique(_specifics(norm)), tuple(kept), tuple(subjects),
                 versions, tuple(parts), acronyms, tuple(_unit(p) for p in _polarity_parts(sentence)))


def _is_hedge(sentence: str) -> bool:
    """A sentence that declines, hedges or points elsewhere instead of stating a fact."""
    if not (_DECLINE.search(sentence) or _POINTER.search(sentence)):
        return False
    norm = _normalise(sentence)
    if _quantities(norm)[0] or _specifics(norm):
        return False
    return len([w for w in _words(norm) if w not in _META_WORDS]) <= 4


_VAGUE = re.compile(
    r"\b(?:do|does|did|handle[sd]?|manage[sd]?|configure[sd]?|change[sd]?|set|find|adjust|control|take[sn]? care of|"
    r"takes care of|deal[st]? with|sort(?:s|ed)? out|fix(?:es|ed)?)\s+(?:this|that|it|these|those|them)\b"
    r"|\b(?:this|that|it|these|those|they)\s+(?:is|are|can be|may be|should be|will be)\s+(?:\w+\s+)?"
    r"(?:configurable|possible|supported|available|handled|managed|done|automatic|adjustable|changeable|"
    r"customi[sz]able|set up|taken care of)\b"
    r"|\bfor (?:a while|some time)\b",
    re.IGNORECASE)
_SHORT_COPULA = re.compile(r"^(?:it|this|that|they)(?:'s| is| are| was| were) (?:just |simply )?"
                           r"(?:a|an|the|one of the) "
                           r"[a-z-]+(?: [a-z-]+)?[.!]?$", re.IGNORECASE)


def _is_vague(sentence: str) -> bool:
    """No checkable content: a placeholder stands for the answer ("you can do this in the agent", "that is
    configurable"), with few content words, no number and no identifier."""
    norm = _normalise(sentence)
    if _quantities(norm)[0] or _specifics(norm) or _named(norm):
        return False
    if _SHORT_COPULA.match(norm.strip()) and not re.search(r"[A-Z]", norm.strip()[1:]):
        return True  # "It is a sync error."
    if not _VAGUE.search(norm):
        return False
    return len([w for w in _words(norm) if w not in _META_WORDS]) <= 4


def _claim_sentences(answer: str, chunk_ids: Iterable[str] = ()) -> list[str]:
    """The answer's sentences that state something: no decline, hedge or pleasantry."""
    out = []
    for sentence in _split_sentences(_strip_citations(answer, chunk_ids)):
        if _is_hedge(sentence):
            continue
        norm = _normalise(sentence)
        if len(_words(norm)) < 2 and not _quantities(norm)[0] and not _specifics(norm):
            continue
        out.append(sentence)
    return out


# --------------------------------------------------------------------------------------------
# Support of a claim by the chunks
# --------------------------------------------------------------------------------------------

MIN_COVERAGE = 0.6          # share of a claim's content words one chunk must contain
MIN_ANCHOR = 0.34           # share of them one sentence, line or cell of that chunk must contain
MIN_USEFUL_COVERAGE = 0.5   # share of a reference statement a useful chunk must support


def _compatible(scope: Iterable[str], wanted: Sequence[str]) -> bool:
    scope = set(scope)
    return not wanted or not scope or bool(scope & set(wanted))


def _chunk_compatible(chunk: Chunk, wanted: Sequence[str]) -> bool:
    """A chunk can speak for the wanted versions if it is of one of them or names one."""
    if not wanted or chunk.version is None or chunk.version in wanted:
        return True
    return bool(chunk.versions & set(wanted))


def _overlap(words: Iterable[str], unit: Unit) -> int:
    return sum(1 for w in words if w in unit.words)


def _comparable(mine: Quantity, theirs: Quantity) -> bool:
    return mine.unit == theirs.unit


def _quantity_support(index: int, claim: Claim, chunk: Chunk, wanted: Sequence[str]) -> bool:
    """The value the chunk gives for the quantity's role is the claim's: among the chunk's values of the
    same kind, the one whose surroundings match the quantity's best (the words around it, three times;
    the words of its clause, twice; of the whole claim; the claim's other values in the same unit) is
    equal to it. So "5 business days on Starter" is read in the Starter cell of the right row, and a value
    of another plan, version or row does not count."""
    quantity, subject = claim.quantities[index], claim.subjects[index]
    words = claim.words
    others = [q for i, q in enumerate(claim.quantities) if i != index]
    best_key: tuple[float, bool] | None = None
    for unit in chunk.units:
        if unit.row and unit.versions:
            continue  # a row of a table whose columns are versions: only its cells are scoped
        if not _compatible(chunk.scope(unit) if wanted else unit.versions, wanted):
            continue
        overlap = _overlap(words, unit)
        keyed = sum(1 for o in others if any(o.matches(q) for q in unit.key_values))
        base = 2 * _overlap(subject, unit) + overlap + keyed
        base += base / (len(unit.words) + 1) / 10
        for value in unit.values:
            same = quantity.matches(value)
            if not same and not _comparable(quantity, value):
                continue
            if same and not (overlap or not words):
                continue
            key = (round(base + 3 * len(quantity.context & value.context), 6), same)
            if best_key is None or key > best_key:
                best_key = key
    return best_key is not None and best_key[1]


def _coverage(words: Sequence[str], chunk: Chunk) -> float:
    if not words:
        return 1.0
    return sum(1 for w in words if w in chunk.words) / len(words)


def _anchor(words: Sequence[str], chunk: Chunk) -> int:
    return max((_overlap(words, u) for u in chunk.units), default=0)


def _named_ok(claim: Claim, chunk: Chunk) -> bool:
    """Every name of the claim is in the chunk, and the unit that states it matches the rest of the claim
    at least as well as any unit naming something else instead (Windows and macOS, not Linux)."""
    for name in claim.named:
        if name not in chunk.words:
            return False
        if name in claim.acronyms:
            continue  # CLI, API, CSV: product terms, present is enough
        rest = [w for w in claim.words if w != name]
        best_with = best_against = -1
        for unit in chunk.units:
            if name in unit.words:
                best_with = max(best_with, _overlap(rest, unit))
            elif unit.named - set(claim.named) - set(claim.words):
                best_against = max(best_against, _overlap(rest, unit))
        if best_with < 0 or best_with < best_against:
            return False
    return True


_ANTONYMS = {a: b for x, y in (
    ("delete", "keep"), ("delete", "stay"), ("enable", "disable"), ("allow", "block"), ("allow", "deny"),
    ("increase", "decrease"), ("include", "exclude"), ("before", "after"), ("more", "less"), ("first", "last"),
    ("require", "optional"), ("automatic", "manual"), ("automatically", "manually"), ("public", "private"),
    ("upload", "download"), ("older", "newer"), ("minimum", "maximum"), ("shorter", "longer"), ("earlier", "later"),
    ("add", "remove"), ("encrypt", "plain"), ("accept", "reject"), ("online", "offline"), ("success", "failure"),
    ("inside", "outside"), ("immediately", "later"), ("same", "different"),
) for a, b in ((_stem(x), _stem(y)), (_stem(y), _stem(x)))}


def _opposed(mine: Unit, theirs: Unit) -> bool:
    """The two units say opposite things: one is negated about what the other states, or one uses a word
    whose antonym the other uses instead."""
    if mine.negated != theirs.negated:
        negative, positive = (mine, theirs) if mine.negated else (theirs, mine)
        if len(negative.negation_scope & positive.words) >= min(2, len(negative.negation_scope)):
            return True
    for word in mine.words:
        antonym = _ANTONYMS.get(word)
        if antonym and antonym in theirs.words and word not in theirs.words and antonym not in mine.words:
            return True
    return False


def _most_similar(terms: frozenset[str], chunks: Sequence[Chunk], containing: str | None = None) -> list[Unit]:
    """The chunk clauses most similar to a set of terms (cosine of the word and value sets, at least two
    shared words, at least 0.4), optionally among the clauses that contain a given word."""
    best_key, best = 0.4, []
    for chunk in chunks:
        for clause in chunk.clauses:
            if containing and containing not in clause.words:
                continue
            other = clause.terms
            if len(terms & clause.words) < 2:
                continue
            key = round(len(terms & other) / math.sqrt(len(terms) * len(other)), 6)
            if key > best_key:
                best_key, best = key, [clause]
            elif key == best_key:
                best.append(clause)
    return best


def _polarity_conflict(claim: Claim, chunks: Sequence[Chunk]) -> bool:
    """A clause of the claim is stated the other way round by the chunk clause most similar to it, or,
    for each name in it ("Starter", "Team"), by the most similar chunk clause about that name."""
    for part in claim.parts:
        words = part.words
        if len(words) < 2:
            continue
        best = _most_similar(part.terms, chunks)
        if best and all(_opposed(part, c) for c in best):
            return True
        for name in claim.named:
            if name in words and name not in claim.acronyms:
                best = _most_similar(part.terms, chunks, containing=name)
                if best and all(_opposed(part, c) for c in best):
                    return True
    return False


def _temporal_conflict(claim: Claim, chunks: Sequence[Chunk], wanted: Sequence[str], question: str = "") -> bool:
    """The sentence that states the claim (read with the question it answers) best speaks of another
    version than the wanted one, clearly better than any sentence about the wanted version."""
    if not wanted or len(claim.words) < 2 or claim.quantities:
        return False  # a claim with values is read in the wanted version by its values
    words = _unique([*claim.words, *_words(_normalise(question))])
    best_ok = best_other = 0
    for chunk in chunks:
        for unit in chunk.units:
            if unit.row:
                continue
            overlap = _overlap(words, unit)
            if _compatible(chunk.scope(unit), wanted):
                best_ok = max(best_ok, overlap)
            else:
                best_other = max(best_other, overlap)
    return best_other >= max(2, 0.5 * len(claim.words)) and best_other >= best_ok + 2


@dataclass
class Support:
    chunk: Chunk
    coverage: float       # share of the claim's words in the chunk
    clause_coverage: float  # the same for the claim's least covered clause (of five words or more)
    anchor: float         # share of the claim's words in the chunk's best matching unit
    quantities_ok: bool
    specifics_ok: bool
    named_ok: bool

    items_ok: bool = True  # every item of a list in the claim has half its words in the chunk

    @property
    def grounded(self) -> bool:
        return (self.coverage >= MIN_COVERAGE and self.clause_coverage >= MIN_COVERAGE and self.anchor >= MIN_ANCHOR
                and self.quantities_ok and self.specifics_ok and self.named_ok and self.items_ok)


def _list_items(sentence: str) -> list[list[str]]:
    """The items of the lists in a sentence ("A, B and C"), as content words: each must be supported."""
    items: list[list[str]] = []
    for clause in _clauses(sentence):
        if "," not in clause:
            continue
        pieces = [p for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", clause) if p.strip()]
        if len(pieces) >= 3:
            items.extend(words for words in (_words(_normalise(p)) for p in pieces) if len(words) >= 2)
    return items


def _weighted_coverage(claim: Claim, chunk: Chunk) -> float:
    """Share of the claim's content found in the chunk: words count 1, identifiers (code, paths) 2.
    (Quantities are checked on their own: each must be stated in the chunk for the claim's subject.)"""
    words = _content_words(claim)
    total = len(words) + 2 * len(claim.specifics)
    if not total:
        return 1.0
    found = sum(1 for w in words if w in chunk.words)
    found += 2 * sum(1 for s in claim.specifics if s in chunk.text_low)
    return found / total


def _content_words(claim: Claim) -> list[str]:
    """The claim's words that coverage counts: a supported quantity's unit ("minute") is not one."""
    return [w for w in claim.words if w not in _UNIT_STEMS] if claim.quantities else list(claim.words)


def _support(claim: Claim, chunk: Chunk, wanted: Sequence[str]) -> Support:
    words = _content_words(claim)
    anchor = _anchor(words, chunk) / len(words) if words else 1.0
    clause_coverage = 1.0
    if len(claim.clauses) > 1:
        clause_coverage = min((_weighted_coverage(_claim(p.text), chunk) for p in claim.clauses if len(p.words) >= 5),
                              default=1.0)
    return Support(chunk, _weighted_coverage(claim, chunk), clause_coverage, anchor,
                   all(_quantity_support(i, claim, chunk, wanted) for i in range(len(claim.quantities))),
                   all(s in chunk.text_low for s in claim.specifics), _named_ok(claim, chunk),
                   all(_coverage(item, chunk) >= 0.5 for item in _list_items(claim.text)))


def _wanted_versions(claim: Claim, question: str) -> tuple[str, ...]:
    """The versions a claim speaks of: the ones it names, else the ones the question names."""
    return claim.versions or _unique(v for _, v in _quantities(_normalise(question))[1])


def _with_context(claim: Claim, question: str) -> Claim:
    """A claim too short to stand alone ("90 days.") is read with the question's words as its subject."""
    if len(claim.words) >= 2:
        return claim
    extra = _unique([*claim.words, *_words(_normalise(question))])
    subjects = tuple(tuple(_unique([*s, *extra])) for s in claim.subjects)
    return replace(claim, words=extra, subjects=subjects)


def _grounding(claim: Claim, chunks: Sequence[Chunk], question: str) -> list[str] | None:
    """Ids of the chunks that ground the claim, or None. The claim must not be contradicted by the
    context (polarity or another version) and must be grounded as a whole in one chunk, or else each
    of its clauses in some chunk."""
    wanted = _wanted_versions(claim, question)
    usable = [c for c in chunks if _chunk_compatible(c, wanted)]
    if _polarity_conflict(claim, usable) or _temporal_conflict(claim, chunks, wanted, question):
        return None
    grounded = [s.chunk.chunk_id for s in (_support(claim, c, wanted) for c in usable) if s.grounded]
    if grounded:
        return list(_unique(grounded))
    parts = _clauses(claim.text)
    if len(parts) < 2:
        return None
    found: list[str] = []
    for part in parts:
        sub = _claim(part)
        if len(sub.words) < 2 and not sub.quantities and not sub.specifics:
            continue
        sub = replace(sub, subjects=tuple(tuple(_unique([*s, *claim.words])) for s in sub.subjects),
                      versions=sub.versions or claim.versions)
        ids = [s.chunk.chunk_id for s in (_support(sub, c, wanted) for c in usable) if s.grounded]
        if not ids:
            return None
        found.extend(ids)
    return list(_unique(found)) or None


def _contradicting_value(claim: Claim, chunks: Sequence[Chunk]) -> bool:
    """A unit about the same subject states a different value of the same kind."""
    for index, quantity in enumerate(claim.quantities):
        subject = claim.subjects[index]
        need = max(1, (len(subject) + 1) // 2)
        for chunk in chunks:
            for unit in chunk.units:
                if _overlap(subject, unit) >= need and any(
                        _comparable(quantity, q) and not quantity.matches(q) for q in unit.quantities):
                    return True
    return False


def _verdict(claim: Claim, chunks: Sequence[Chunk], question: str) -> tuple[str, list[str]]:
    """The claim's verdict and, when it is grounded, the chunks that support it."""
    claim = _with_context(claim, question)
    supporting = _grounding(claim, chunks, question)
    if supporting:
        return "grounded", supporting
    wanted = _wanted_versions(claim, question)
    usable = [c for c in chunks if _chunk_compatible(c, wanted)]
    if not all(any(q.matches(x) for c in chunks for x in c.quantities) for q in claim.quantities):
        return ("inconsistency" if _contradicting_value(claim, chunks) else "fabrication"), []
    if not all(any(s in c.text_low for c in chunks) for s in claim.specifics):
        return "fabrication", []
    if _polarity_conflict(claim, usable) or _temporal_conflict(claim, chunks, wanted, question):
        return "inconsistency", []
    covered = any(_coverage(claim.words, c) >= MIN_COVERAGE for c in chunks)
    if claim.quantities and covered:
        return "inconsistency", []  # the values exist, but not for this subject or not in this version
    if not all(any(n in c.words for c in chunks) for n in claim.named):
        return "fabrication", []
    if claim.named and any(s.coverage >= MIN_COVERAGE and not s.named_ok
                           for s in (_support(claim, c, wanted) for c in usable)):
        return "inconsistency", []  # the chunk says it of another name (Windows and macOS, not Linux)
    return "out_of_context", []


def faithfulness(inputs: Mapping[str, Any]) -> dict[str, Any]:
    chunks = _chunks(inputs)
    question = str(inputs.get("question") or "")
    claims = []
    for sentence in _claim_sentences(str(inputs.get("answer") or ""), [c.chunk_id for c in chunks]):
        verdict, supporting = _verdict(_claim(sentence), chunks, question)
        claims.append({"claim": sentence, "verdict": verdict, "supporting_chunk_ids": supporting})
    return {"claims": claims}


# --------------------------------------------------------------------------------------------
# Answer relevance: reverse questions
# --------------------------------------------------------------------------------------------

_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_SIZE_UNITS = ("gb", "tb", "mb", "kb", "kb/s", "mbit/s", "usd", "byte", "character")


def _ask_value(match: re.Match[str]) -> str:
    """The question words that stand for a value: "every 15 minutes" -> "how often", "$10" -> "how much"."""
    raw, every = match.group("value"), match.group("every")
    number = re.match(r"\$?\s?([\d.,:]+)", raw)
    if number and _VERSION_SHAPE.match(number.group(1)) and raw.strip() == number.group(1):
        return match.group(0)  # a product version stays in the question
    unit_word = (match.group("unit") or "").lower()
    unit = _UNITS.get(unit_word)
    if every and unit in _TIME_UNITS:
        return " how often "
    if unit in _TIME_UNITS:
        return " how long "
    if raw.startswith("$") or unit in _SIZE_UNITS:
        return " how much "
    if unit == "%":
        return " what percentage "
    if unit_word and unit_word not in _STOP:
        return f" how many {match.group('unit')} "
    return " "


_VALUE = re.compile(r"(?P<every>\bevery\s+)?(?P<value>\$?\s?(?<![\w.-])\d[\d,.:]*)"
                    r"(?:\s?-?\s?(?P<unit>%|[A-Za-z]+(?:/s)?))?")


def _without_values(text: str) -> str:
    """The text with the values it gives replaced by the words that ask for them, versions kept."""
    text = _URL.sub(" ", _strip_citations(text))
    text = _VALUE.sub(_ask_value, text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", re.sub(r"\s+", " ", text))
    return text.strip(" ,.;:!?-")


def _question_for(sentence: str) -> str:
    """The question a sentence answers: the sentence with its values replaced by the words that ask for
    them ("Snapshots are taken every 15 minutes" -> "snapshots are taken how often")."""
    text = _without_values(sentence)
    if not text:
        return "What is stated?"
    return f"What about: {text[0].lower()}{text[1:]}?"


def _three_groups(sentences: Sequence[str]) -> list[list[str]]:
    n = len(sentences)
    if n == 1:
        return [[sentences[0]]] * 3
    if n == 2:
        return [[sentences[0]], [sentences[1]], list(sentences)]
    size, extra = divmod(n, 3)
    groups, start = [], 0
    for index in range(3):
        end = start + size + (1 if index < extra else 0)
        groups.append(list(sentences[start:end]))
        start = end
    return groups


def _noncommittal(answer: str, sentences: Sequence[str], factual: Sequence[str]) -> bool:
    if not answer.strip():
        return True
    if not factual:
        return True
    first = sentences[0] if sentences else answer
    norm = _normalise(answer)
    if _DECLINE.search(first) and not _quantities(norm)[0] and not _specifics(norm) and len(factual) <= 1:
        return True
    return False


def answer_questions(inputs: Mapping[str, Any]) -> dict[str, Any]:
    answer = _strip_citations(str(inputs.get("answer") or ""))
    sentences = _split_sentences(answer)
    factual = [s for s in sentences if not _is_hedge(s) and not _is_vague(s)
               and ([w for w in _words(_normalise(s)) if w not in _META_WORDS] or _quantities(_normalise(s))[0])]
    noncommittal = _noncommittal(answer, sentences, factual)
    basis = factual or sentences or [answer.strip() or "nothing"]
    questions = [" ".join(_question_for(s) for s in group) for group in _three_groups(basis)]
    if len(set(questions)) < 3:  # the same content three times: vary only words the embedder ignores
        prefixes = ("", "So, ", "And then: ")
        questions = [f"{prefix}{q}" for prefix, q in zip(prefixes, questions)]
    return {"questions": questions, "noncommittal": noncommittal}


# --------------------------------------------------------------------------------------------
# Context precision and recall
# --------------------------------------------------------------------------------------------

def _statement_split(sentence: str) -> list[str]:
    """Split on ', and' / ' and ' / ', while' when both halves are full statements with a verb."""
    parts = re.split(r",? and (?=(?:the |a |an |its |their |it |they |this |each |every |all |[A-Z]))"
                     r"|, while |, whereas ", sentence)
    if len(parts) == 1:
        return [sentence]
    verbs = re.compile(r"\b(?:is|are|was|were|can|cannot|will|has|have|had|does|do|must|may|keeps?|uses?|supports?|"
                       r"allows?|needs?|requires?|runs?|takes?|gets?|becomes?|stays?|\w+s|\w+ed)\b")
    if all(len(_words(_normalise(p))) >= 3 and verbs.search(p) for p in parts):
        return [p.strip().rstrip(".") + "." for p in parts]
    return [sentence]


def reference_statements(inputs: Mapping[str, Any]) -> dict[str, Any]:
    reference = _strip_citations(str(inputs.get("reference") or ""))
    statements: list[str] = []
    for sentence in _split_sentences(reference):
        if _is_hedge(sentence):
            continue
        for part in _statement_split(sentence):
            part = part.strip()
            if part and part not in statements:
                statements.append(part)
    if not statements and reference.strip():
        statements = [reference.strip()]
    return {"statements": statements}


def _statement_score(statement: Claim, chunk: Chunk, wanted: Sequence[str], context: Sequence[str]) -> float:
    """How much of a reference statement a chunk supports: its words (1 each), its quantities stated for
    the same subject and its identifiers (2 each), read with the question's words (a fifth of the score).
    0 when the chunk says the opposite or gives a different value of the same kind for the subject."""
    if _polarity_conflict(statement, [chunk]):
        return 0.0
    total = float(len(statement.words))
    matched = sum(1.0 for w in statement.words if w in chunk.words)
    for index, quantity in enumerate(statement.quantities):
        total += 2
        if _quantity_support(index, statement, chunk, wanted):
            matched += 2
        elif _contradicting_value(replace(statement, quantities=(quantity,), subjects=(statement.subjects[index],)),
                                  [chunk]):
            return 0.0
    for specific in statement.specifics:
        total += 2
        matched += 2 if specific in chunk.text_low else 0
    score = matched / total if total else 0.0
    if context:
        score = 0.8 * score + 0.2 * _coverage(context, chunk)
    return score


def context_precision(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk is useful when it supports a statement of the reference answer, nearly as well as the best
    chunk supports that statement."""
    chunks = _chunks(inputs)
    question = str(inputs.get("question") or "")
    context = list(_unique(_words(_normalise(question))))
    statements = reference_statements({"reference": inputs.get("reference") or ""})["statements"]
    useful = [False] * len(chunks)
    for sentence in statements:
        statement = _with_context(_claim(sentence), question)
        wanted = _wanted_versions(statement, question)
        scores = [(_statement_score(statement, c, wanted, context) if _chunk_compatible(c, wanted) else 0.0)
                  for c in chunks]
        best = max(scores, default=0.0)
        if best < MIN_USEFUL_COVERAGE:
            continue
        for index, score in enumerate(scores):
            if score >= MIN_USEFUL_COVERAGE and score >= 0.8 * best:
                useful[index] = True
    return {"verdicts": [{"chunk_id": c.chunk_id, "useful": flag} for c, flag in zip(chunks, useful)]}


def context_recall(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A statement is attributed to the chunk that holds most of its words and all its quantities."""
    chunks = _chunks(inputs)
    out = []
    for sentence in inputs.get("statements") or []:
        statement = _claim(str(sentence))
        best_id, best = None, 0.0
        for chunk in chunks:
            if not _chunk_compatible(chunk, statement.versions):
                continue
            support = _support(statement, chunk, statement.versions)
            if not (support.quantities_ok and support.specifics_ok):
                continue
            if support.coverage > best:
                best_id, best = chunk.chunk_id, support.coverage
        attributed = best_id is not None and best >= MIN_COVERAGE
        out.append({"statement": str(sentence), "attributed": attributed, "chunk_id": best_id if attributed else None})
    return {"statements": out}
