"""The `Swap` enum of Jupiter Aggregator v6: which AMM a route-plan step calls,
and the fields each variant carries, in the on-chain order.

A v1 route (`route`, `shared_accounts_route`, their token-ledger and exact-out
forms) puts its amounts *after* the route plan, so the plan has to be stepped
over exactly; a step whose variant index is past this table cannot be sized,
and the instruction is then reported as undecodable rather than guessed at.

Source: the program's on-chain Anchor IDL (177 variants, ordinals 0-176), as
published verbatim in sava-software/idl-clients (jupiter/swap/gen/idl.json);
ordinals 0-89 match jup-ag/jupiter-amm-implementation idls/jupiter_aggregator_v6.json.
"""

from __future__ import annotations

from jupcron.txguard.borsh import CannotDecodeError, Layout, Reader, skip

SIDE: Layout = ("enum", 2)  # Bid | Ask
YES_NO: Layout = ("enum", 2)  # BisonFiPredictSide
HYLO: Layout = ("enum", 8)  # HyloSwapType
SOLS: Layout = ("enum", 3)  # SanctumSolsSwapType
# RemainingAccountsInfo { slices: Vec<RemainingAccountsSlice { accounts_type: u8, length: u8 }> }
REMAINING: Layout = ("vec", ("struct", ("u8", "u8")))

_CANDIDATE_NAMES = """
HumidiFi TesseraV HumidiFiV2 RaydiumV2 RaydiumClmm Whirlpool ZeroFi BisonFiV2 GoonFiV2
GoonFiV3 WhirlpoolV2 ZeroFiSwapV2
"""
_CANDIDATE_FIELDS: dict[str, tuple[Layout, ...]] = {
    "HumidiFi": ("u64", "bool"),
    "TesseraV": (SIDE,),
    "HumidiFiV2": ("u64", "bool"),
    "Whirlpool": ("bool",),
    "BisonFiV2": ("bool",),
    "GoonFiV2": ("bool",),
    "GoonFiV3": ("bool",),
    "WhirlpoolV2": ("bool", ("option", REMAINING)),
}


def _union(
    names: str, fields: dict[str, tuple[Layout, ...]]
) -> tuple[tuple[str, tuple[Layout, ...]], ...]:
    return tuple((name, fields.get(name, ())) for name in names.split())


CANDIDATE: Layout = ("union", _union(_CANDIDATE_NAMES, _CANDIDATE_FIELDS))
CANDIDATE_BPS: Layout = ("struct", (CANDIDATE, "u32"))  # CandidateSwapWithBps

_SWAP_NAMES_TEXT = """
Saber SaberAddDecimalsDeposit SaberAddDecimalsWithdraw TokenSwap Sencha Step Cropper Raydium
Crema Lifinity Mercurial Cykura Serum MarinadeDeposit MarinadeUnstake Aldrin AldrinV2
Whirlpool Invariant Meteora GooseFX DeltaFi Balansol MarcoPolo Dradex LifinityV2 RaydiumClmm
Openbook Phoenix Symmetry TokenSwapV2 HeliumTreasuryManagementRedeemV0
StakeDexStakeWrappedSol StakeDexSwapViaStake GooseFXV2 Perps PerpsAddLiquidity
PerpsRemoveLiquidity MeteoraDlmm OpenBookV2 RaydiumClmmV2
StakeDexPrefundWithdrawStakeAndDepositStake Clone SanctumS SanctumSAddLiquidity
SanctumSRemoveLiquidity RaydiumCP WhirlpoolSwapV2 OneIntro PumpWrappedBuy PumpWrappedSell
PerpsV2 PerpsV2AddLiquidity PerpsV2RemoveLiquidity MoonshotWrappedBuy MoonshotWrappedSell
StabbleStableSwap StabbleWeightedSwap Obric FoxBuyFromEstimatedCost FoxClaimPartial SolFi
SolayerDelegateNoInit SolayerUndelegateNoInit TokenMill DaosFunBuy DaosFunSell ZeroFi
StakeDexWithdrawWrappedSol VirtualsBuy VirtualsSell Perena PumpSwapBuy PumpSwapSell Gamma
MeteoraDlmmSwapV2 Woofi MeteoraDammV2 MeteoraDynamicBondingCurveSwap StabbleStableSwapV2
StabbleWeightedSwapV2 RaydiumLaunchlabBuy RaydiumLaunchlabSell BoopdotfunWrappedBuy
BoopdotfunWrappedSell Plasma GoonFi HumidiFi
MeteoraDynamicBondingCurveSwapWithRemainingAccounts TesseraV PumpWrappedBuyV2
PumpWrappedSellV2 PumpSwapBuyV2 PumpSwapSellV2 Heaven SolFiV2 Aquifer PumpWrappedBuyV3
PumpWrappedSellV3 PumpSwapBuyV3 PumpSwapSellV3 JupiterLendDeposit JupiterLendRedeem DefiTuna
AlphaQ RaydiumV2 SarosDlmm Futarchy MeteoraDammV2WithRemainingAccounts Obsidian WhaleStreet
DynamicV1 PumpWrappedBuyV4 PumpWrappedSellV4 CarrotIssue CarrotRedeem Manifest BisonFi
HumidiFiV2 PerenaStar JupiterRfqV2 GoonFiV2 Scorch VaultLiquidUnstake XOrca Quantum
WhaleStreetV2 Riptide RunnerRodeo TaurusFi Omnipair MSwap Hylo VoltrDeposit VoltrWithdraw
SanctumSV2 LemmingsFi ScaleVmmBuy ScaleVmmSell ScaleAmmBuy ScaleAmmSell BisonFiV2 Trends
HumaDeposit HumaInstantWithdraw Kipseli DynamicV2 PumpSwapBuyV3WithCashbackClaim
PumpSwapSellV3WithCashbackClaim PumpWrappedBuyV4WithCashbackClaim
PumpWrappedSellV4WithCashbackClaim GoonFiV3 PumpWrappedBuyV5 PumpWrappedSellV5 ZeroFiSwapV2
BisonFiPredict ByrealDynamicV3 Flux VaultLiquidSellLst VaultLiquidBuyLst KipseliV2 Deriverse
Hadron BinaryFi Metric JupiterLendDexSwap Gatorswap Flint Denali PerenaStarV2Deposit
PerenaStarV2WithdrawFromExternal SanctumSols HyloV2 SanctumPamm Archer TrenchWrappedBuy
TrenchWrappedSell
"""
SWAP_NAMES = tuple(_SWAP_NAMES_TEXT.split())
_SWAP_FIELDS: dict[str, tuple[Layout, ...]] = {
    "Crema": ("bool",),
    "Serum": (SIDE,),
    "Aldrin": (SIDE,),
    "AldrinV2": (SIDE,),
    "Whirlpool": ("bool",),
    "Invariant": ("bool",),
    "DeltaFi": ("bool",),
    "MarcoPolo": ("bool",),
    "Dradex": (SIDE,),
    "Openbook": (SIDE,),
    "Phoenix": (SIDE,),
    "Symmetry": ("u64", "u64"),
    "StakeDexSwapViaStake": ("u32",),
    "OpenBookV2": (SIDE,),
    "StakeDexPrefundWithdrawStakeAndDepositStake": ("u32",),
    "Clone": ("u8", "bool", "bool"),
    "SanctumS": ("u8", "u8", "u32", "u32"),
    "SanctumSAddLiquidity": ("u8", "u32"),
    "SanctumSRemoveLiquidity": ("u8", "u32"),
    "WhirlpoolSwapV2": ("bool", ("option", REMAINING)),
    "Obric": ("bool",),
    "FoxClaimPartial": ("bool",),
    "SolFi": ("bool",),
    "TokenMill": (SIDE,),
    "Perena": ("u8", "u8"),
    "MeteoraDlmmSwapV2": (REMAINING,),
    "RaydiumLaunchlabBuy": ("u64",),
    "RaydiumLaunchlabSell": ("u64",),
    "Plasma": (SIDE,),
    "GoonFi": ("bool", "u8"),
    "HumidiFi": ("u64", "bool"),
    "TesseraV": (SIDE,),
    "Heaven": ("bool",),
    "SolFiV2": ("bool",),
    "DefiTuna": ("bool", ("option", REMAINING)),
    "AlphaQ": ("bool",),
    "SarosDlmm": ("bool",),
    "Futarchy": (SIDE,),
    "WhaleStreet": (SIDE,),
    "DynamicV1": (("vec", CANDIDATE), ("option", "u8")),
    "Manifest": (SIDE,),
    "BisonFi": ("bool",),
    "HumidiFiV2": ("u64", "bool"),
    "PerenaStar": ("bool",),
    "JupiterRfqV2": (SIDE, "bytes"),
    "GoonFiV2": ("bool",),
    "Scorch": ("u128",),
    "VaultLiquidUnstake": (("array", "u64", 5), "u64"),
    "Quantum": (SIDE,),
    "WhaleStreetV2": (SIDE, "u64", "u64"),
    "Riptide": ("bool",),
    "TaurusFi": ("bool",),
    "Hylo": (HYLO,),
    "SanctumSV2": ("u8", "u8", "u32", "u32"),
    "LemmingsFi": ("bool",),
    "BisonFiV2": ("bool",),
    "Kipseli": ("bool",),
    "DynamicV2": (("vec", CANDIDATE_BPS), "u8", "u8"),
    "GoonFiV3": ("bool",),
    "PumpWrappedBuyV5": ("bool",),
    "PumpWrappedSellV5": ("bool",),
    "BisonFiPredict": (YES_NO, "bool"),
    "Flux": ("u64", "bool"),
    "VaultLiquidBuyLst": ("u64",),
    "KipseliV2": ("bool",),
    "Deriverse": (SIDE, "u32"),
    "Hadron": ("bool",),
    "Metric": ("bool",),
    "JupiterLendDexSwap": ("bool",),
    "Gatorswap": ("bool",),
    "Flint": ("bool", "bool"),
    "Denali": ("bool",),
    "PerenaStarV2WithdrawFromExternal": ("u8",),
    "SanctumSols": (SOLS,),
    "HyloV2": (HYLO,),
    "Archer": (SIDE,),
}
SWAP_FIELDS: tuple[tuple[Layout, ...], ...] = tuple(_SWAP_FIELDS.get(n, ()) for n in SWAP_NAMES)


class UnknownSwapError(CannotDecodeError):
    """A route-plan step names a Swap variant the published interface does not list."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(
            f"a route step uses Swap variant #{index}, which the published interface "
            f"(variants 0-{len(SWAP_NAMES) - 1}) does not list: its size is unknown"
        )


def read_swap(r: Reader) -> str:
    """Step over one `Swap` value; its variant's name."""
    index = r.u8()
    if index >= len(SWAP_NAMES):
        raise UnknownSwapError(index)
    for part in SWAP_FIELDS[index]:
        skip(r, part)
    return SWAP_NAMES[index]


def read_route_plan(r: Reader, *, v2: bool) -> list[str]:
    """Step over a route plan (`Vec<RoutePlanStep>`, or `Vec<RoutePlanStepV2>`
    when `v2`); the AMM names of its steps, in order."""
    amms = []
    for _ in range(r.count()):
        amms.append(read_swap(r))
        r.take(2 if v2 else 1)  # bps: u16 (v2) | percent: u8 (v1)
        r.take(2)  # input_index, output_index: u8 each
    return amms
