"""Morphology tables of the twelve Latin-script European languages.

Endings are inflectional only: a derivational suffix (-er of flower, -ness) would merge words
that are not one lexeme. Function words are closed-class and chosen to be distinctive.
"""

from undercroft_core.language._internal.language_table import register, table

register(
    table(
        "en",
        "English",
        "latin",
        "s es ed ing",
        3,
        alternations=("english",),
        function_words="the and of to was that with for this are were have has not but they would "
        "will there their been which from what when who could should about into than them these",
        # Not distinctive (shared with other Latin-script languages or too short to vote), still no topic;
        # s t d ll m re ve are the pieces the tokeniser makes of clitics (it's, don't, I'd, we'll, I'm).
        stop_words="a an i you he she it in on at my his her be is has had did do does how where why "
        "can might any some s t d ll m re ve",
        irregular="go goes went gone going; be is are was were been am being; child children; man men; "
        "woman women; mouse mice; foot feet; tooth teeth; person people; have has had having; "
        "do does did done; take took taken; write wrote written; buy bought; think thought; "
        "see saw seen; eat ate eaten; begin began begun; run ran; give gave given; bring brought; "
        "teach taught; catch caught; find found; leave left; speak spoke spoken; mean meant",
    ),
    table(
        "de",
        "German",
        "latin",
        "e en er ern es s n em st t et te ten tet test est",
        3,
        alternations=("umlaut",),
        function_words="der und nicht ist ein eine einen dem den des mit auf sich auch ich wir war "
        "wurde zu im für aber noch nach bei wie oder dass sind hat haben werden wird einem einer",
        irregular="sein bin ist sind war waren gewesen; gehen geht ging gingen gegangen; haben hat hatte "
        "hatten gehabt; bringen brachte gebracht; denken dachte gedacht; gut besser beste; "
        "nehmen nimmt nahm genommen; sehen sieht sah gesehen; tun tut tat getan",
    ),
    table(
        "nl",
        "Dutch",
        "latin",
        "en s e er ere st t te ten de den",
        3,
        alternations=("double",),
        function_words="het een niet dat op te voor zijn maar ook bij er nog naar wij ik hij zij "
        "aan wordt werd heeft hebben deze dit geen wel omdat",
        irregular="zijn is ben was waren geweest; gaan gaat ging gingen gegaan; hebben heeft had "
        "hadden gehad; kind kinderen; stad steden; schip schepen",
    ),
    table(
        "it",
        "Italian",
        "latin",
        "o a i e he hi che chi are ere ire iamo ate ete ite ano ono amo emo imo ava avo avano ato ata ati ito "
        "ita iti uto uta uti ando endo isce iscono erà irà arà eranno ò",
        3,
        function_words="il lo gli di che non un una per con del della dei delle nel nella sono è ma "
        "anche questo questa ha alla degli sul sulla ho",
        irregular="andare vado va vanno andato andata; essere sono è era erano stato stata; "
        "uomo uomini; fare faccio fa fatto; dio dei",
    ),
    table(
        "es",
        "Spanish",
        "latin",
        "o a os as e es s ar er ir ando iendo ado ada ados adas ido ida idos idas é ó aba aban amos "
        "an en ía ían ión iones",
        3,
        function_words="el los las y del se lo su al pero más está son fue muy también este esta "
        "una por para con sus hay ha",
        irregular="ir voy va vamos van fue fui iba; ser soy es son era eran sido; estar estoy está "
        "están estuvo; tener tengo tiene tuvo",
    ),
    table(
        "fr",
        "French",
        "latin",
        "e es s x ent er ez ons ais ait aient é ée és ées ir it is issons issent al aux eau eaux "
        "ai as a erai era eront",
        3,
        function_words="le les des du et est qui pas ne dans pour sur avec il elle nous vous ce "
        "cette au aux mais sont été était ont une",
        irregular="aller va vais vont allons allé allée irai ira; être suis est sont sommes était été; "
        "avoir ai a ont avons avait eu; œil yeux; ciel cieux",
    ),
    table(
        "pt",
        "Portuguese",
        "latin",
        "o a os as e es s ar er ir ando endo indo ado ada ados adas ido ida idos idas ou ei amos am "
        "em ão ões ães al ais el éis ava avam ia iam",
        3,
        function_words="o os do da dos das e um uma não em no na ao aos mais muito também são é foi "
        "mas pela pelo nos nas",
        irregular="ir vou vai vamos vão foi fui ia; ser sou é são era eram sido; ter tenho tem teve; "
        "pão pães; mão mãos",
    ),
    table(
        "sv",
        "Swedish",
        "latin",
        "en et er ar or na erna arna orna a e s t de te r n ns ade ades",
        3,
        alternations=("umlaut",),
        function_words="och att det som ett på är av för med till inte har jag vi om men han hon så från när eller kan",
        irregular="gå går gick gått; man män; vara är var varit; bok böcker; fot fötter",
    ),
    table(
        "pl",
        "Polish",
        "latin",
        "a u em y i ie ów om ami ach ą ę o e ego emu ym im ej ach ami owi owie ach",
        3,
        function_words="nie się że jest jak ale od po co tak za przez być był była jego jej oraz już dla tym są",
        irregular="człowiek ludzie ludzi; dziecko dzieci; być jest są był była było byli; rok lata lat",
    ),
    table(
        "fi",
        "Finnish",
        "latin",
        "n t a ä ta tä ssa ssä sta stä lla llä lta ltä lle ksi na nä en in i ja jä ni si mme nne "
        "nsa nsä han hän kin ko kö ihin iin",
        3,
        agglutinative=True,
        function_words="ja on ei se että oli ovat mutta kun niin myös tai jos hän minä sinä tämä "
        "joka ole olen kanssa vain nyt",
        irregular="olla on ovat oli olivat ollut; mies miehet miehen; hyvä parempi",
    ),
    table(
        "hu",
        "Hungarian",
        "latin",
        "ok ak ek ök k ban ben ba be ból ből hoz hez höz nak nek val vel ra re ról ről on en ön n t "
        "at et ot öt tól től ig ért m om am em öm d od ad ed öd ja je a e juk jük unk ünk tok tek "
        "tök uk ük i",
        3,
        agglutinative=True,
        function_words="az és hogy nem egy van volt meg ez azt már csak mint vagy még én ők ha fel itt",
        irregular="van volt lesz vannak voltak; ló lovak lovat; kő kövek",
    ),
    table(
        "cs",
        "Czech",
        "latin",
        "a u e y i ě ou em ům ech ách ami ů o í ého ému ém ým ými ích ové ovi ách",
        3,
        function_words="je se na že jsem jsou byl byla ale jak pro tak by jeho její už také nebo když jsme není",
        irregular="člověk lidé lidi; být je jsou byl byla bylo; dítě děti; dům domu domy domě; pes psa psi psem",
    ),
)
