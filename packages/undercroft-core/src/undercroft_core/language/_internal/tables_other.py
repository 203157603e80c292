"""Morphology tables of Turkish and the seven languages with scripts of their own."""

from undercroft_core.language._internal.language_table import register, table

register(
    table(
        "tr",
        "Turkish",
        "latin",
        "ler lar im ım um üm in ın un ün i ı u ü si sı su sü imiz ımız umuz ümüz iniz ınız unuz ünüz "
        "leri ları de da te ta den dan ten tan e a ye ya yi yı yu yü nin nın nun nün le la yle yla ki "
        "dir dır dur dür tir tır tur tür mek mak iyor ıyor uyor üyor di dı du dü ti tı tu tü miş mış "
        "muş müş ecek acak er ar ir ır ur ür n m k lik lık luk lük nde nda ndan nden",
        2,
        agglutinative=True,
        alternations=("turkish",),
        function_words="ve bir bu için ile çok ama gibi daha olarak değil var yok şu ben sen biz onlar "
        "mi mı ki her kadar sonra",
        irregular="ben bana beni benim; sen sana seni senin; su suyu suyun",
    ),
    table(
        "ru",
        "Russian",
        "cyrillic",
        "а я о е ы и у ю ом ем ём ой ей ам ям ах ях ами ями ов ев ь й ий ый ая яя ое ее ые ие ого его "
        "ому ему ую юю ых их ым им ыми ими ть ет ут ют ит ат ят ете ите ешь ишь ал ала ало али ил ила "
        "ило или ла ло ли л",
        3,
        approximate=True,
        function_words="и в не на что это он она они с по как но из за то же был была от для у мы",
        irregular="человек люди людей; ребёнок ребенок дети детей; идти иду идёт шёл шла шли; "
        "хороший лучше; год года лет",
    ),
    table(
        "el",
        "Greek",
        "greek",
        "ος ου ο ε οι ων ους α ας ες η ης ι ια ιου ιων ιες ει εις ουμε ετε ουν ω ομαι εται ονται "
        "ησα ησε ησαν ισα ισε ουσα ουσε",
        3,
        ending_ignores_marks=True,
        function_words="και το η ο να του της την με που τα για δεν στο στην από είναι θα οι ένα",
        irregular="είμαι είναι ήταν ήμουν; γυναίκα γυναίκες; άνθρωπος άνθρωποι ανθρώπου ανθρώπων",
    ),
    table(
        "hi",
        "Hindi",
        "devanagari",
        "ा े ी ों ें ियाँ ियों ीं ो ता ती ते ना ने नी कर ाएँ ाओं ाएं ूँगा ेगा ेगी ेंगे िए या यी ये",
        2,
        approximate=True,
        function_words="है और के की का में से को पर यह वह था थी हैं नहीं भी",
        irregular="जाना जाता जाती गया गई गए; होना है हैं था थी थे हुआ",
    ),
    table(
        "ka",
        "Georgian",
        "georgian",
        "ი ის ით ად ო ში ზე თან ისთვის ებ ები ების ებს ებით ებად ებში ებზე ებთან ებისთვის მა მ ა ას ამ ათ ს",
        2,
        agglutinative=True,
        function_words="და არის რომ ეს არ ის ამ მე ჩვენ თუ",
        irregular="კაცი კაცები კაცმა; ქალი ქალები",
    ),
    table(
        "ko",
        "Korean",
        "hangul",
        "은 는 이 가 을 를 에 에서 에게 의 도 로 으로 와 과 만 까지 부터 들 하고 보다 처럼 께서 한테 "
        "이다 입니다 였다 이었다 다 었다 았다 어요 아요 고 는다 습니다 ㅂ니다 지만 면 서",
        1,
        agglutinative=True,
        function_words="그리고 그 이 저 그런데 하지만 또 것 수 있다 없다",
        irregular="나 내가 나를 내; 저 제가 저를 제",
    ),
    table(
        "ar",
        "Arabic",
        "arabic",
        "ة ه ها هم هن كم كن نا ي ك ون ين ان ات وا تم ت",
        3,
        function_words="في من على الى ان عن مع هذا هذه التي الذي كان كانت لا ما هو هي ثم قد لم لن بين كل او الذين ذلك",
        irregular="امراة نساء المراة النساء; رجل رجال",
    ),
)
